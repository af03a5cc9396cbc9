import { gunzipSync } from "node:zlib"
import { OciRegistry, type RegistryError } from "@prbox/registry"
import { Effect, Layer } from "effect"
import { Config } from "../../Config.ts"
import { accessHint, localRegistryRefusal, RegistryAuth, refusedForCredentials } from "../../RegistryAuth.ts"
import { FeatureUnavailable } from "../Errors.ts"
import { FeatureDownloads } from "../FeatureDownloads.ts"

const FEATURE_LAYER = "application/vnd.devcontainers.layer.v1+tar"
/** A feature's unpacked archive may not exceed this (a .tgz is bounded before and after). */
const MAX_TAR_BYTES = 256 * 1024 * 1024

/**
 * Features fetched on Node through @prbox/registry: OCI artifacts with the
 * user's credentials only for a registry config.json lists (RegistryAuth),
 * tarballs anonymously; a .tgz decompressed here (bounded), never unpacked.
 */
export const layer = Layer.effect(
  FeatureDownloads,
  Effect.gen(function* () {
    const registry = yield* OciRegistry
    const auth = yield* RegistryAuth
    const config = yield* Config

    /** A source on this machine only when config.json's localRegistries lists it (RegistryAuth.ts). */
    const reachable = (key: string, host: string) =>
      Effect.flatMap(
        config.load.pipe(
          Effect.mapError((error) => new FeatureUnavailable({ feature: key, source: host, detail: error.message }))
        ),
        (loaded) => {
          const refused = localRegistryRefusal(host, loaded.localRegistries)
          return refused === undefined
            ? Effect.void
            : Effect.fail(new FeatureUnavailable({ feature: key, source: host, detail: refused }))
        }
      )

    const unavailable = (key: string, source: string) => (error: { readonly message: string }) =>
      new FeatureUnavailable({ feature: key, source, detail: error.message })

    const fromRegistry = (key: string, source: string, hint: string) => (error: RegistryError) =>
      new FeatureUnavailable({
        feature: key,
        source,
        detail:
          refusedForCredentials(error.detail) || error.reason === "unauthorized"
            ? `${error.detail}; ${hint}`
            : error.detail
      })

    return {
      fetch: Effect.fn("FeatureDownloads.fetch")(function* (reference, pinned) {
        if (reference._tag === "Tarball") {
          const source = new URL(reference.url).host
          yield* reachable(reference.key, source)
          const tarball = yield* registry
            .fetchTarball(reference.url)
            .pipe(Effect.mapError(fromRegistry(reference.key, source, "")))
          if (pinned !== undefined && pinned !== tarball.digest) {
            return yield* new FeatureUnavailable({
              feature: reference.key,
              source,
              detail: `its sha256 is not the one it is pinned to (${pinned})`
            })
          }
          const tar = yield* Effect.try({
            try: () => gunzipSync(tarball.bytes, { maxOutputLength: MAX_TAR_BYTES }),
            catch: () => ({ message: "not a gzip-compressed tar archive, or larger than the cap unpacked" })
          }).pipe(Effect.mapError(unavailable(reference.key, source)))
          return { digest: tarball.digest, tar: new Uint8Array(tar) }
        }
        const { oci } = reference
        yield* reachable(reference.key, oci.registry)
        const access = yield* auth
          .forRegistry(oci.registry)
          .pipe(Effect.mapError(unavailable(reference.key, oci.registry)))
        const artifact = yield* registry
          .fetchArtifact(oci, {
            mediaType: FEATURE_LAYER,
            pinnedDigest: pinned,
            credentials: access.login?.credentials
          })
          .pipe(Effect.mapError(fromRegistry(reference.key, oci.registry, accessHint(access))))
        return { digest: artifact.manifestDigest, tar: artifact.bytes }
      })
    }
  })
)
