import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import Dockerode from "dockerode"
import { Effect } from "effect"
import type { TestRegistry } from "./registry.ts"

/**
 * Puts things into a test registry (scripts/testing/registry.ts) the way
 * their publishers do: devcontainer features as the devcontainers CLI's
 * `features publish` writes them (blob uploads, then the manifest, through
 * the distribution API), and images by `docker push`.
 */

export const FEATURE_LAYER = "application/vnd.devcontainers.layer.v1+tar"
export const FEATURE_CONFIG = "application/vnd.devcontainers"
export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"

export const digestOf = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

/** Where the registry keeps a blob's bytes (to corrupt one for a test). */
export const blobPath = (registry: TestRegistry, digest: string): string => {
  const hex = digest.replace(/^sha256:/, "")
  return join(registry.storageDir, "docker/registry/v2/blobs/sha256", hex.slice(0, 2), hex, "data")
}

/** The publisher's own login: Basic behind htpasswd, a push token behind token auth. */
const authHeader = (registry: TestRegistry, repository: string): Record<string, string> => {
  if (registry.token !== undefined) {
    return { authorization: `Bearer ${registry.token.tokenFor(`repository:${repository}:pull,push`)}` }
  }
  if (registry.auth === undefined) return {}
  return { authorization: `Basic ${Buffer.from(`${registry.auth.user}:${registry.auth.password}`).toString("base64")}` }
}

const request = (registry: TestRegistry, repository: string, path: string, init: RequestInit, expected: number) =>
  Effect.tryPromise({
    try: async () => {
      const url = path.startsWith("http") ? path : `${registry.url}${path}`
      const headers = { ...authHeader(registry, repository), ...init.headers }
      const response = await fetch(url, { ...init, headers })
      const body = await response.text()
      if (response.status !== expected) {
        throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} (expected ${expected}) ${body}`)
      }
      return response
    },
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  })

/** Uploads a blob (POST a session, PUT its bytes with their digest); the registry checks the digest. */
export const pushBlob = (registry: TestRegistry, repository: string, bytes: Uint8Array) =>
  Effect.gen(function* () {
    const digest = digestOf(bytes)
    const session = yield* request(registry, repository, `/v2/${repository}/blobs/uploads/`, { method: "POST" }, 202)
    const location = new URL(session.headers.get("location") ?? "", registry.url)
    location.searchParams.set("digest", digest)
    yield* request(
      registry,
      repository,
      location.toString(),
      {
        method: "PUT",
        headers: { "content-type": "application/octet-stream" },
        body: Buffer.from(bytes)
      },
      201
    )
    return digest
  })

/** PUTs a manifest under `tag` (or a digest); its digest and size, as the registry computes them. */
export const pushManifest = (
  registry: TestRegistry,
  repository: string,
  tag: string,
  manifest: unknown,
  mediaType: string = OCI_MANIFEST
) =>
  Effect.gen(function* () {
    const bytes = Buffer.from(JSON.stringify(manifest))
    yield* request(
      registry,
      repository,
      `/v2/${repository}/manifests/${tag}`,
      { method: "PUT", headers: { "content-type": mediaType }, body: bytes },
      201
    )
    return { digest: digestOf(bytes), size: bytes.byteLength }
  })

/** A folder as the devcontainers CLI packs a feature: a plain tar of `.` (here with fixed owners and times). */
export const tarFolder = (folder: string): Uint8Array =>
  execFileSync(
    "tar",
    ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-C", folder, "-cf", "-", "."],
    {
      maxBuffer: 64 * 1024 * 1024
    }
  )

export interface PublishedFeature {
  readonly manifestDigest: string
  readonly manifestSize: number
  readonly layerDigest: string
  readonly layer: Uint8Array
}

/**
 * Publishes a feature folder (holding `devcontainer-feature.json`) as
 * `<registry>/<repository>:<tag>`: its tar as the one layer, the empty
 * `{}` config, the feature's JSON as the manifest's `dev.containers.metadata`
 * annotation, as the devcontainers CLI does. `layerMediaType` (tests)
 * publishes the layer as another kind.
 */
export const publishFeature = (
  registry: TestRegistry,
  options: {
    readonly repository: string
    readonly tag: string
    readonly folder: string
    readonly layerMediaType?: string
  }
) =>
  Effect.gen(function* () {
    const { repository, tag, folder } = options
    const layer = tarFolder(folder)
    const metadata = JSON.parse(readFileSync(join(folder, "devcontainer-feature.json"), "utf8")) as { id: string }
    const config = Buffer.from("{}")
    const configDigest = yield* pushBlob(registry, repository, config)
    const layerDigest = yield* pushBlob(registry, repository, layer)
    const manifest = {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: FEATURE_CONFIG, digest: configDigest, size: config.byteLength },
      layers: [
        {
          mediaType: options.layerMediaType ?? FEATURE_LAYER,
          digest: layerDigest,
          size: layer.byteLength,
          annotations: { "org.opencontainers.image.title": `devcontainer-feature-${metadata.id}.tgz` }
        }
      ],
      annotations: { "dev.containers.metadata": JSON.stringify(metadata) }
    }
    const pushed = yield* pushManifest(registry, repository, tag, manifest)
    return { manifestDigest: pushed.digest, manifestSize: pushed.size, layerDigest, layer } satisfies PublishedFeature
  })

const engine = new Dockerode({ socketPath: "/var/run/docker.sock" })

/**
 * Pushes a local image to the registry as `localhost:<port>/<repository>:<tag>`
 * (`docker tag`, then a push through the Docker API, with the registry's
 * credentials when it has auth), and removes that local tag again so a pull
 * of it must go to the registry. Returns the pushed reference.
 */
export const pushImage = (registry: TestRegistry, localImage: string, repository: string, tag: string) =>
  Effect.tryPromise({
    try: async () => {
      const ref = `${registry.host}/${repository}:${tag}`
      execFileSync("docker", ["tag", localImage, ref])
      try {
        // The engine wants X-Registry-Auth on every push: an empty login for an anonymous registry.
        const authconfig =
          registry.auth === undefined
            ? {}
            : { username: registry.auth.user, password: registry.auth.password, serveraddress: registry.host }
        const stream = await engine.getImage(ref).push({ authconfig })
        await new Promise<void>((resolve, reject) =>
          engine.modem.followProgress(stream, (error, entries: Array<{ error?: string }>) => {
            const failed = error ?? entries.find((entry) => entry.error !== undefined)?.error
            if (failed) reject(new Error(`push of ${ref}: ${String(failed)}`))
            else resolve()
          })
        )
      } finally {
        execFileSync("docker", ["rmi", ref], { stdio: "ignore" })
      }
      return ref
    },
    catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
  })
