import { formatReference } from "@prbox/domain"
import { Effect, Layer, Result } from "effect"
import { layerOf, MANIFEST_ACCEPT, type ManifestDocument, readManifest, singleManifest } from "../Manifest.ts"
import { OciRegistry } from "../OciRegistry.ts"
import type { RegistryError } from "../RegistryError.ts"
import { session } from "./Auth.ts"
import { type Answer, errorCodes, failure, type Subject, send, sha256 } from "./Http.ts"

export interface Options {
  /** A manifest (or index) larger than this is refused; default 4 MiB. */
  readonly maxManifestBytes?: number
  /** A layer or tarball larger than this is refused; default 200 MiB. */
  readonly maxLayerBytes?: number
  /** Each exchange (its redirects and its body included); default 120 s. */
  readonly timeoutMs?: number
}

const MIB = 1024 * 1024

/** The 404 and any other answer that is not the 200 asked for. */
const expectOk = (subject: Subject, answer: Answer, what: string): Effect.Effect<Answer, RegistryError> => {
  if (answer.status === 200) return Effect.succeed(answer)
  if (answer.status === 404) {
    return Effect.fail(failure(subject, "not-found", `${what} not found${errorCodes(answer.bytes)}`))
  }
  return Effect.fail(
    failure(subject, "protocol", `${what}: the server answered ${answer.status}${errorCodes(answer.bytes)}`)
  )
}

/** A URL shown without its query or fragment, which may hold a signature. */
const shownUrl = (url: URL): string => `${url.origin}${url.pathname}`

export const make = (options: Options = {}) => {
  const maxManifestBytes = options.maxManifestBytes ?? 4 * MIB
  const maxLayerBytes = options.maxLayerBytes ?? 200 * MIB
  const timeoutMs = options.timeoutMs ?? 120_000

  return OciRegistry.of({
    fetchArtifact: Effect.fn("OciRegistry.fetchArtifact")(function* (
      reference,
      { mediaType, pinnedDigest, credentials }
    ) {
      const subject: Subject = {
        operation: "artifact.fetch",
        registry: reference.registry,
        reference: formatReference(reference)
      }
      if (pinnedDigest !== undefined && reference.digest !== undefined && pinnedDigest !== reference.digest) {
        return yield* failure(
          subject,
          "digest-mismatch",
          `the reference names ${reference.digest}, the pin ${pinnedDigest}`
        )
      }
      const wanted = pinnedDigest ?? reference.digest
      const repository = session(subject, reference, credentials, timeoutMs)
      const base = `${reference.scheme}://${reference.registry}/v2/${reference.repository}`

      /** A manifest by tag or digest: its bytes' digest and what they read as. */
      const manifest = (target: string) =>
        Effect.gen(function* () {
          const answer = yield* repository.send(new URL(`${base}/manifests/${target}`), {
            headers: { accept: MANIFEST_ACCEPT },
            maxBytes: maxManifestBytes,
            timeoutMs
          })
          yield* expectOk(subject, answer, `manifest ${target}`)
          const read = readManifest(answer.bytes, answer.headers.get("content-type") ?? undefined)
          if (Result.isFailure(read)) return yield* failure(subject, read.failure.reason, read.failure.detail)
          return { digest: sha256(answer.bytes), size: answer.bytes.byteLength, document: read.success }
        })

      const top = yield* manifest(wanted ?? reference.tag)
      if (wanted !== undefined && top.digest !== wanted) {
        return yield* failure(subject, "digest-mismatch", `the manifest hashes to ${top.digest}, not ${wanted}`)
      }
      let document: ManifestDocument = top.document
      if (document._tag === "Index") {
        const entry = singleManifest(document)
        if (Result.isFailure(entry)) return yield* failure(subject, "media-type", entry.failure)
        const inner = yield* manifest(entry.success.digest)
        if (inner.digest !== entry.success.digest || inner.size !== entry.success.size) {
          return yield* failure(subject, "digest-mismatch", `the index's manifest hashes to ${inner.digest}`)
        }
        if (inner.document._tag === "Index") {
          return yield* failure(subject, "media-type", "the image index names another index, not a manifest")
        }
        document = inner.document
      }
      if (document._tag !== "Manifest") return yield* failure(subject, "media-type", "no manifest")
      const layer = layerOf(document, mediaType)
      if (Result.isFailure(layer)) return yield* failure(subject, "media-type", layer.failure)
      const { digest, size } = layer.success
      if (size > maxLayerBytes) {
        return yield* failure(subject, "too-large", `the layer is ${size} bytes, over the ${maxLayerBytes}-byte cap`)
      }
      // One byte over the stated size is enough to know it is not the layer.
      const blob = yield* repository.send(new URL(`${base}/blobs/${digest}`), { maxBytes: size + 1, timeoutMs }).pipe(
        Effect.catchIf(
          (error) => error.reason === "too-large",
          () => Effect.fail(failure(subject, "digest-mismatch", `the layer is larger than the ${size} bytes stated`))
        )
      )
      yield* expectOk(subject, blob, `layer ${digest}`)
      const got = sha256(blob.bytes)
      if (blob.bytes.byteLength !== size || got !== digest) {
        return yield* failure(
          subject,
          "digest-mismatch",
          `the layer's ${blob.bytes.byteLength} bytes hash to ${got}, not ${digest} (${size} bytes)`
        )
      }
      return {
        manifestDigest: top.digest,
        layerDigest: digest,
        annotations: document.manifest.annotations ?? {},
        bytes: blob.bytes
      }
    }),

    fetchTarball: Effect.fn("OciRegistry.fetchTarball")(function* (text) {
      const parsed = URL.canParse(text) ? new URL(text) : undefined
      const subject: Subject = {
        operation: "tarball.fetch",
        registry: parsed?.host ?? "(none)",
        reference: parsed === undefined ? "(not a URL)" : shownUrl(parsed)
      }
      if (parsed === undefined) return yield* failure(subject, "refused", "the feature's address is not a URL")
      const answer = yield* send(subject, parsed, { maxBytes: maxLayerBytes, timeoutMs })
      yield* expectOk(subject, answer, "the tarball")
      return { bytes: answer.bytes, digest: sha256(answer.bytes) }
    })
  })
}

/** OciRegistry on Node's fetch; `options` cap sizes and time (tests make them small). */
export const layer = (options: Options = {}) => Layer.succeed(OciRegistry, make(options))
