import { Result, Schema } from "effect"

/**
 * The documents a registry answers a manifest request with (OCI image spec,
 * Docker's v2 schema 2), read and chosen from. Pure.
 */

export const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
export const DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json"
export const DOCKER_MANIFEST_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"

/** A devcontainer feature's (or template's) content layer: a tar of its folder. */
export const DEVCONTAINERS_LAYER = "application/vnd.devcontainers.layer.v1+tar"

/** What a manifest request accepts: the manifests first, an index only if that is all the registry has. */
export const MANIFEST_ACCEPT = [
  OCI_MANIFEST,
  DOCKER_MANIFEST,
  `${OCI_INDEX};q=0.5`,
  `${DOCKER_MANIFEST_LIST};q=0.5`
].join(", ")

const Digest = Schema.String.check(Schema.isPattern(/^sha256:[0-9a-f]{64}$/))

export const Descriptor = Schema.Struct({
  mediaType: Schema.String,
  digest: Digest,
  size: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  annotations: Schema.optional(Schema.Record(Schema.String, Schema.String))
})
export type Descriptor = typeof Descriptor.Type

const ImageManifest = Schema.Struct({
  schemaVersion: Schema.Literal(2),
  mediaType: Schema.optional(Schema.String),
  config: Descriptor,
  layers: Schema.Array(Descriptor),
  annotations: Schema.optional(Schema.Record(Schema.String, Schema.String))
})

const ImageIndex = Schema.Struct({
  schemaVersion: Schema.Literal(2),
  mediaType: Schema.optional(Schema.String),
  manifests: Schema.Array(Descriptor)
})

export type ManifestDocument =
  | { readonly _tag: "Manifest"; readonly manifest: typeof ImageManifest.Type }
  | { readonly _tag: "Index"; readonly index: typeof ImageIndex.Type }

/** The document's own kind: its `mediaType` field, else the answer's Content-Type (parameters dropped). */
const kindOf = (body: unknown, contentType: string | undefined): string | undefined => {
  const declared =
    typeof body === "object" && body !== null && "mediaType" in body && typeof body.mediaType === "string"
      ? body.mediaType
      : undefined
  return declared ?? contentType?.split(";")[0]?.trim().toLowerCase()
}

/** Why a manifest answer cannot be used: another kind of document, or one that does not read. */
export interface ManifestProblem {
  readonly reason: "media-type" | "protocol"
  readonly detail: string
}

const unreadable = (detail: string): Result.Result<never, ManifestProblem> =>
  Result.fail({ reason: "protocol", detail })

/** Reads a manifest answer: an image manifest or an image index; anything else is named and refused. */
export const readManifest = (
  bytes: Uint8Array,
  contentType: string | undefined
): Result.Result<ManifestDocument, ManifestProblem> => {
  let body: unknown
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return unreadable("the manifest is not JSON")
  }
  const kind = kindOf(body, contentType)
  const isIndex = kind === OCI_INDEX || kind === DOCKER_MANIFEST_LIST
  if (!isIndex && kind !== OCI_MANIFEST && kind !== DOCKER_MANIFEST) {
    return Result.fail({
      reason: "media-type",
      detail: `the manifest is of media type ${JSON.stringify(kind ?? "none")}, not an image manifest`
    })
  }
  if (isIndex) {
    const index = Schema.decodeUnknownResult(ImageIndex)(body)
    return Result.isSuccess(index)
      ? Result.succeed({ _tag: "Index", index: index.success })
      : unreadable(`the image index does not read: ${index.failure.message}`)
  }
  const manifest = Schema.decodeUnknownResult(ImageManifest)(body)
  return Result.isSuccess(manifest)
    ? Result.succeed({ _tag: "Manifest", manifest: manifest.success })
    : unreadable(`the manifest does not read: ${manifest.failure.message}`)
}

/** An index is followed only when it names exactly one manifest: there is no platform to choose for a feature. */
export const singleManifest = (index: ManifestDocument & { _tag: "Index" }): Result.Result<Descriptor, string> => {
  const entries = index.index.manifests
  const [only] = entries
  if (entries.length === 1 && only !== undefined) return Result.succeed(only)
  return Result.fail(`the reference names an image index of ${entries.length} manifests, not a single artifact`)
}

/** The one layer of `mediaType`; none or several is refused. */
export const layerOf = (
  manifest: ManifestDocument & { _tag: "Manifest" },
  mediaType: string
): Result.Result<Descriptor, string> => {
  const layers = manifest.manifest.layers
  const matching = layers.filter((layer) => layer.mediaType === mediaType)
  const [only] = matching
  if (matching.length === 1 && only !== undefined) return Result.succeed(only)
  const found = [...new Set(layers.map((layer) => layer.mediaType))].join(", ") || "no layers"
  return Result.fail(
    matching.length === 0
      ? `the manifest has no layer of media type ${mediaType} (it has ${found})`
      : `the manifest has ${matching.length} layers of media type ${mediaType}, not one`
  )
}
