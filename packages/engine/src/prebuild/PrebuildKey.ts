import type { DevcontainerSpec } from "@prbox/devcontainer"
import { Effect } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { SetupFailed } from "../Errors.ts"
import type { EnvironmentChoice, RepositoryFiles, RepositoryName } from "../environment/ChooseEnvironment.ts"
import type { FeatureInputs } from "../features/LocalFeatures.ts"

/**
 * What a prebuild is keyed by: everything that makes its environment (the
 * image or its Dockerfile, devcontainer.json as read, its features and
 * their pins and local files, the user's config that reaches the
 * container) and the create-time commands, for one repository. Two PRs
 * with equal inputs get the same container and the same create-time
 * steps; any difference is another key.
 */
export interface PrebuildKeyInputs {
  readonly repository: RepositoryName
  readonly environment:
    | {
        readonly _tag: "Devcontainer"
        /** devcontainer.json as read (its lifecycle commands among it), less its warnings. */
        readonly spec: Omit<DevcontainerSpec, "warnings">
        readonly features: FeatureInputs
        /** A Dockerfile build's Dockerfile, as text. */
        readonly dockerfile: string | null
      }
    | { readonly _tag: "Configured"; readonly image: string }
    | { readonly _tag: "Default"; readonly image: string }
  /** config.json's part that reaches a sandbox's container or its steps. */
  readonly config: Pick<PrboxConfig, "setupCommands" | "env" | "mounts"> & {
    readonly cpus: number | null
    readonly memoryMb: number | null
    readonly pidsLimit: number | null
  }
}

/** Why an environment gets no prebuild: a PR of it always takes the full path. */
export interface Unkeyable {
  readonly _tag: "Unkeyable"
  readonly reason: string
}

/**
 * JSON with every object's keys sorted and `undefined` members left out:
 * the same inputs give the same text whatever order they were built in.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null"
  if (Array.isArray(value))
    return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonicalJson(member)}`).join(",")}}`
}

/** A Dockerfile that copies from its context depends on files the key does not hash. */
const COPIES_FROM_CONTEXT = /^\s*(?:COPY|ADD)\b(?![^\n]*--from=)/im

/**
 * Whether a Dockerfile's build reads its context: `COPY`/`ADD` other than
 * from another stage. Such an environment is not prebuilt (its key would
 * have to hash the context), so a PR changing a copied file never starts
 * from a stale image.
 */
export const readsBuildContext = (dockerfile: string): boolean =>
  COPIES_FROM_CONTEXT.test(dockerfile.replace(/\\\r?\n/g, " "))

/** A prebuild's key: the inputs' canonical JSON, SHA-256, hex (40 characters: names stay short). */
export const prebuildKey = (inputs: PrebuildKeyInputs) =>
  Effect.tryPromise({
    try: () => crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(inputs))),
    catch: () => new SetupFailed({ reason: "could not derive the prebuild's key (SHA-256 unavailable)" })
  }).pipe(
    Effect.map((digest) =>
      Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0"))
        .join("")
        .slice(0, 40)
    )
  )

/**
 * The key inputs of a chosen environment, read from the files it was
 * chosen from (a commit's, in the mirror); a Compose project or a
 * Dockerfile that copies from its context is `Unkeyable` (today's path).
 */
export const keyInputsOf = (
  choice: EnvironmentChoice,
  files: RepositoryFiles,
  repository: RepositoryName,
  config: PrboxConfig,
  defaultImage: string
): Effect.Effect<PrebuildKeyInputs | Unkeyable, SetupFailed> =>
  Effect.gen(function* () {
    const { setupCommands, env, mounts, cpus, memoryMb, pidsLimit } = config
    const limits = { cpus: cpus ?? null, memoryMb: memoryMb ?? null, pidsLimit: pidsLimit ?? null }
    // Only the name: a PR's ref (its number, its head) is not its environment.
    const named = { host: repository.host, repository: repository.repository }
    const base = { repository: named, config: { setupCommands, env, mounts, ...limits } }
    switch (choice._tag) {
      case "Configured":
        return { ...base, environment: { _tag: "Configured", image: choice.image } } satisfies PrebuildKeyInputs
      case "Default":
        return { ...base, environment: { _tag: "Default", image: defaultImage } } satisfies PrebuildKeyInputs
      case "Devcontainer": {
        const { warnings: _warnings, ...spec } = choice.spec
        if (spec.source._tag === "Compose") {
          return { _tag: "Unkeyable", reason: "a Docker Compose environment is not prebuilt" } satisfies Unkeyable
        }
        let dockerfile: string | null = null
        if (spec.source._tag === "Build") {
          const text = yield* files
            .read(spec.source.dockerfile)
            .pipe(Effect.mapError((error) => new SetupFailed({ reason: `prebuild key: ${error.message}` })))
          if (text === undefined) {
            return { _tag: "Unkeyable", reason: `${spec.source.dockerfile} cannot be read` } satisfies Unkeyable
          }
          if (readsBuildContext(text)) {
            return {
              _tag: "Unkeyable",
              reason: `${spec.source.dockerfile} copies files from its build context, which a prebuild's key does not cover`
            } satisfies Unkeyable
          }
          dockerfile = text
        }
        return {
          ...base,
          environment: { _tag: "Devcontainer", spec, features: choice.features, dockerfile }
        } satisfies PrebuildKeyInputs
      }
    }
  })
