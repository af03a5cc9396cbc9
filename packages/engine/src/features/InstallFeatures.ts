import { type DevcontainerSpec, featureBuild, mergeMetadata } from "@prbox/devcontainer"
import type { ImageInfo } from "@prbox/domain"
import { posixPath } from "@prbox/domain"
import { Clock, Context, Effect, FileSystem, Layer } from "effect"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { RuntimeError } from "../Errors.ts"
import { FeatureUnavailable } from "./Errors.ts"
import { FeatureDownloads } from "./FeatureDownloads.ts"
import { FeaturePins, PIN_MAX_AGE_MS, pinsToReuse } from "./FeaturePins.ts"
import { resolveFeatureSet } from "./FeatureSet.ts"
import type { FeatureInputs } from "./LocalFeatures.ts"

type Progress = (line: string) => Effect.Effect<void>

/** Images with features installed: one repository, tagged by the build's inputs, so a feature set on a base is built once. */
export const FEATURES_REPOSITORY = "prbox-features"

/** A feature as the sandbox records it: its key and the digest it was installed from (null: a local folder). */
export interface InstalledFeature {
  readonly key: string
  readonly digest: string | null
}

/**
 * A devcontainer.json's features installed on its image: the set fetched and
 * ordered (FeatureSet.ts), then one image build through the engine, as root,
 * on top of the base image (by id, so the cache key is the base's content).
 * The result is labelled `devcontainer.metadata` with the base's entries and
 * each feature's, which is how the plan reads what features ask of the
 * container. Nothing is unpacked on the host: the build unpacks the archives.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const fs = yield* FileSystem.FileSystem
  const downloads = yield* FeatureDownloads
  const pinStore = yield* FeaturePins

  /**
   * The pins the set is fetched with: the PR's lock file when it has one,
   * else prbox's own for `scope` while they hold (FeaturePins.ts); what to
   * record after the build (undefined: keep what is recorded).
   */
  const choosePins = (scope: string, spec: DevcontainerSpec, inputs: FeatureInputs, onProgress: Progress) =>
    Effect.gen(function* () {
      if (inputs.lockFile) return { pins: inputs.pins, reused: undefined, record: undefined }
      const now = yield* Clock.currentTimeMillis
      const requested = spec.features.map((feature) => feature.reference.key).sort()
      const reused = pinsToReuse(yield* pinStore.recall(scope), requested, now)
      if (reused === undefined) return { pins: {}, reused, record: { requested, pinnedAt: now } }
      const days = Math.round(PIN_MAX_AGE_MS / 86_400_000)
      yield* onProgress(
        `features pinned by prbox since ${new Date(reused.pinnedAt).toISOString()}: the digests installed then (refreshed after ${days} days, or when the features change)`
      )
      return { pins: reused.pins, reused, record: undefined }
    })

  const written = (dir: string, path: string, content: string | Uint8Array) =>
    Effect.gen(function* () {
      const target = posixPath.join(dir, path)
      yield* fs.makeDirectory(posixPath.dirname(target), { recursive: true })
      yield* typeof content === "string" ? fs.writeFileString(target, content) : fs.writeFile(target, content)
    })

  return Effect.fn("Features.install")(function* (
    spec: DevcontainerSpec,
    inputs: FeatureInputs,
    base: { readonly image: string; readonly info: ImageInfo },
    /** Whose pins these are: the repository (`host/owner/name`) and its devcontainer.json. */
    scope: string,
    onProgress: Progress
  ) {
    const chosen = yield* choosePins(scope, spec, inputs, onProgress)
    const set = yield* resolveFeatureSet(
      downloads,
      spec.path,
      spec.features,
      { ...inputs, pins: chosen.pins },
      spec.config.overrideFeatureInstallOrder ?? [],
      onProgress
    ).pipe(
      Effect.mapError((error) =>
        chosen.reused === undefined
          ? error
          : new FeatureUnavailable({
              ...error,
              detail: `${error.detail} (fetched by prbox's pin of ${new Date(chosen.reused.pinnedAt).toISOString()})`
            })
      )
    )
    // The users features install for, as the devcontainers CLI's findContainerUsers decides them.
    // Only the users are read here: the widening is decided when the plan is made.
    const merged = mergeMetadata(base.info.labels["devcontainer.metadata"], spec.config, spec.path, null)
    const containerUser = merged.containerUser?.name ?? base.info.user
    const context = featureBuild({
      baseImage: base.info.id,
      imageUser: base.info.user,
      containerUser,
      remoteUser: merged.remoteUser?.name ?? containerUser,
      baseLabel: base.info.labels["devcontainer.metadata"],
      features: set
    })
    for (const warning of context.warnings) yield* onProgress(`warning: ${warning}`)
    yield* onProgress(`installing features: ${set.map((feature) => feature.key).join(", ")}`)
    const built = yield* Effect.scoped(
      Effect.gen(function* () {
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "prbox-features-" })
        yield* written(dir, "Dockerfile", context.dockerfile)
        for (const file of context.files) yield* written(dir, file.path, file.text)
        for (const archive of context.archives)
          yield* written(dir, archive.path, set[archive.index]?.tar ?? new Uint8Array())
        return dir
      }).pipe(
        Effect.mapError((error) => new RuntimeError({ operation: "features.context", detail: error.message })),
        Effect.flatMap((dir) =>
          runtime.buildImage(
            {
              contextDir: dir,
              dockerfile: "Dockerfile",
              args: {},
              repository: FEATURES_REPOSITORY,
              labels: { "devcontainer.metadata": context.label }
            },
            onProgress
          )
        )
      )
    )
    if (built.reused) yield* onProgress(`reusing ${built.tag}: the same features on the same image`)
    if (chosen.record !== undefined) {
      const pins = Object.fromEntries(
        set.flatMap((feature) => (feature.digest === null ? [] : [[feature.key, feature.digest]]))
      )
      yield* pinStore.record(scope, { ...chosen.record, pins })
    }
    return {
      image: built.tag,
      features: set.map((feature): InstalledFeature => ({ key: feature.key, digest: feature.digest }))
    }
  })
})

export class InstallFeatures extends Context.Service<InstallFeatures, Effect.Success<typeof make>>()(
  "prbox/engine/InstallFeatures"
) {
  static readonly layer = Layer.effect(InstallFeatures, make)
}
