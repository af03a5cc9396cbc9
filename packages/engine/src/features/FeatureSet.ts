import {
  archiveFiles,
  FEATURE_FILE,
  type FeatureMetadata,
  type FeatureReference,
  type FeatureToInstall,
  type FeatureValue,
  featureResource,
  installOrder,
  optionValues,
  parseFeatureMetadata,
  parseFeatureReference,
  type RequestedFeature
} from "@prbox/devcontainer"
import { Effect } from "effect"
import { FeatureUnavailable } from "./Errors.ts"
import type { FeatureArchive, FeatureDownloads } from "./FeatureDownloads.ts"
import type { FeatureInputs } from "./LocalFeatures.ts"

/** A feature of the set, ready to install, and what it was fetched as (for the sandbox's record). */
export interface ResolvedFeature extends FeatureToInstall {
  /** The archive's bytes for an archive feature. */
  readonly tar: Uint8Array | undefined
  /** The digest it was checked against (null for a local feature). */
  readonly digest: string | null
}

const MAX_FEATURES = 64

const sourceOf = (reference: FeatureReference): string =>
  reference._tag === "Oci"
    ? reference.oci.registry
    : reference._tag === "Tarball"
      ? new URL(reference.url).host
      : reference.folder

// Identity in the set: the source and version, and the options as given (the CLI installs the same feature twice with different options).
const nodeKey = (reference: FeatureReference, value: FeatureValue): string => {
  const version = reference._tag === "Oci" ? `:${reference.oci.digest ?? reference.oci.tag}` : ""
  const options = typeof value === "object" ? JSON.stringify(Object.entries(value).sort()) : JSON.stringify(value)
  return `${featureResource(reference)}${version} ${options}`
}

/** The metadata in an archive (`./devcontainer-feature.json`), decoded; its id is the feature's. */
const archiveMetadata = (key: string, source: string, archive: FeatureArchive) =>
  Effect.gen(function* () {
    const failed = (detail: string) => new FeatureUnavailable({ feature: key, source, detail })
    const read = archiveFiles(archive.tar)
    if (!read.ok) return yield* failed(read.detail)
    const file = read.files.find((entry) => entry.path === FEATURE_FILE)
    if (file === undefined) return yield* failed(`the archive has no ${FEATURE_FILE}`)
    if (!read.files.some((entry) => entry.path === "install.sh")) return yield* failed("the archive has no install.sh")
    return yield* parseFeatureMetadata(FEATURE_FILE, new TextDecoder().decode(file.content)).pipe(
      Effect.mapError((error) => failed(error.message))
    )
  })

interface Fetched {
  readonly metadata: FeatureMetadata
  readonly content: FeatureToInstall["content"]
  readonly tar: Uint8Array | undefined
  readonly digest: string | null
}

/**
 * The whole set a devcontainer.json asks for: each feature fetched (pinned
 * where the lock file pins it), its `dependsOn` added and fetched in turn,
 * then put in the spec's install order (`installsAfter`,
 * `overrideFeatureInstallOrder`). A dependency cycle is an error naming the
 * features left.
 */
export const resolveFeatureSet = Effect.fn("Features.resolve")(function* (
  downloads: FeatureDownloads["Service"],
  configFile: string,
  requested: ReadonlyArray<RequestedFeature>,
  inputs: FeatureInputs,
  override: ReadonlyArray<string>,
  onProgress: (line: string) => Effect.Effect<void>
) {
  const fetchOne = (reference: FeatureReference) =>
    Effect.gen(function* () {
      const source = sourceOf(reference)
      if (reference._tag === "Local") {
        const files = inputs.local[reference.folder] ?? []
        const text = files.find((file) => file.path === FEATURE_FILE)?.text ?? ""
        const metadata = yield* parseFeatureMetadata(`${reference.folder}/${FEATURE_FILE}`, text).pipe(
          Effect.mapError((error) => new FeatureUnavailable({ feature: reference.key, source, detail: error.message }))
        )
        if (metadata.id !== reference.id) {
          return yield* new FeatureUnavailable({
            feature: reference.key,
            source,
            detail: `its id is ${JSON.stringify(metadata.id)}: a local feature's folder is named as its id`
          })
        }
        return { metadata, content: { _tag: "Files", files }, tar: undefined, digest: null } satisfies Fetched
      }
      yield* onProgress(`fetching feature ${reference.key}`)
      const archive = yield* downloads.fetch(reference, inputs.pins[reference.key])
      const metadata = yield* archiveMetadata(reference.key, source, archive)
      return { metadata, content: { _tag: "Archive" }, tar: archive.tar, digest: archive.digest } satisfies Fetched
    })

  const nodes = new Map<
    string,
    { reference: FeatureReference; value: FeatureValue; fetched: Fetched; dependsOn: Array<string> }
  >()
  const worklist: Array<{ reference: FeatureReference; value: FeatureValue }> = [...requested]
  while (worklist.length > 0) {
    const next = worklist.shift()
    if (next === undefined) break
    const key = nodeKey(next.reference, next.value)
    if (nodes.has(key)) continue
    if (nodes.size >= MAX_FEATURES) {
      return yield* new FeatureUnavailable({
        feature: next.reference.key,
        source: configFile,
        detail: `more than ${MAX_FEATURES} features in the set`
      })
    }
    const fetched = yield* fetchOne(next.reference)
    const dependsOn: Array<string> = []
    for (const [dependency, value] of Object.entries(fetched.metadata.dependsOn ?? {})) {
      const parsed = parseFeatureReference(dependency, configFile)
      if (!parsed.ok || parsed.reference._tag === "Local") {
        return yield* new FeatureUnavailable({
          feature: next.reference.key,
          source: sourceOf(next.reference),
          detail: `dependsOn ${JSON.stringify(dependency)}: ${parsed.ok ? "a dependency cannot be a local folder" : parsed.detail}`
        })
      }
      dependsOn.push(nodeKey(parsed.reference, value))
      worklist.push({ reference: parsed.reference, value })
    }
    nodes.set(key, { reference: next.reference, value: next.value, fetched, dependsOn })
  }

  const resourceOf = (id: string) => {
    const parsed = parseFeatureReference(id, configFile)
    return parsed.ok ? featureResource(parsed.reference) : id
  }
  const order = installOrder(
    [...nodes].map(([key, node]) => {
      const prefix = featureResource(node.reference).split("/").slice(0, -1).join("/")
      return {
        key,
        resource: featureResource(node.reference),
        aliases: (node.fetched.metadata.legacyIds ?? []).map((id) => `${prefix}/${id}`),
        dependsOn: node.dependsOn,
        installsAfter: (node.fetched.metadata.installsAfter ?? []).map(resourceOf)
      }
    }),
    override.map(resourceOf)
  )
  if (!order.ok) {
    const names = order.remaining.map((key) => nodes.get(key)?.reference.key ?? key)
    return yield* new FeatureUnavailable({
      feature: names.join(", "),
      source: configFile,
      detail:
        "their dependsOn/installsAfter form a cycle (or name a feature that cannot be had); nothing can be installed first"
    })
  }
  return order.order.flatMap((key): ReadonlyArray<ResolvedFeature> => {
    const node = nodes.get(key)
    if (node === undefined) return []
    const { metadata, content, tar, digest } = node.fetched
    return [{ key: node.reference.key, metadata, values: optionValues(metadata, node.value), content, tar, digest }]
  })
})
