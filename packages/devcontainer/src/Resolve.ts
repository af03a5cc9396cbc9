import { Effect } from "effect"
import type { DevcontainerConfig } from "./Config.ts"
import { type ContainerOptionsRequest, refusalsOf, requestOf } from "./ContainerRequest.ts"
import { type ComposeSource, composeRequestConfig, composeSource, isComposeConfig } from "./compose/ComposeSource.ts"
import { DevcontainerError } from "./Errors.ts"
import { type RequestedFeature, requestedFeatures } from "./features/Features.ts"
import type { Located } from "./Locate.ts"
import { readDevcontainerText } from "./Parse.ts"
import { containerFolder, folderOf, resolveInRepository } from "./Paths.ts"
import {
  ignoredWarnings,
  isTrustedRepository,
  leftOutDetail,
  leftOutWarning,
  noWidening,
  type Refusal,
  refusalDetail,
  untrustedHint,
  type Widening
} from "./Policy.ts"
import { substitute, substituteRecord, type VariableContext } from "./Variables.ts"

export interface ResolveInput {
  readonly located: Located
  /** e.g. "github.com" */
  readonly host: string
  /** "org/repo" */
  readonly repository: string
  /** The user's config.json `trustedRepositories` patterns. */
  readonly trustedRepositories: ReadonlyArray<string>
  /** config.json's `untrustedWidening`: open without the widening ("omit", the default) or refuse the file. */
  readonly untrustedWidening?: "omit" | "refuse"
  /**
   * Set when a trusted repository's widening is withheld all the same (the
   * PR changes the configuration its base branch has): why, for each
   * setting left out. The repository is then read as an untrusted one.
   */
  readonly withheld?: string
  /** config.json's `featuresRegistry` (`<host>/<namespace>`): where a deprecated short feature id is read from. */
  readonly featuresRegistry?: string
}

export type DevcontainerSource =
  | { readonly _tag: "Image"; readonly image: string }
  | {
      readonly _tag: "Build"
      /** Repo-relative. */
      readonly dockerfile: string
      /** Repo-relative ("." for the root). */
      readonly context: string
      readonly args: Readonly<Record<string, string>>
      readonly target?: string
    }
  | ComposeSource

/** What devcontainer.json alone decides, before any image exists (checked at admission). */
export interface DevcontainerSpec {
  readonly path: string
  readonly source: DevcontainerSource
  readonly warnings: ReadonlyArray<string>
  /** Absolute, normalised. */
  readonly workspaceFolder: string
  /** Whether the user's config.json trusts the repository. */
  readonly trusted: boolean
  /** devcontainer.json's widening, honoured only because the repository is trusted (none otherwise). */
  readonly widening: Widening
  /** What devcontainer.json asks that widens nothing: every repository gets it (variables not yet substituted). */
  readonly options: ContainerOptionsRequest
  /** The widening left out (none for a trusted repository), each with why. */
  readonly ignored: ReadonlyArray<Refusal>
  /** Why widening is left out, for the image label's too; null when the repository's is honoured. */
  readonly withheld: string | null
  readonly repositoryName: string
  /** The features to install on the image, as devcontainer.json names them (fetched when the image is made). */
  readonly features: ReadonlyArray<RequestedFeature>
  readonly config: DevcontainerConfig
}

const fail = (file: string, property: string | undefined, detail: string) =>
  Effect.fail(new DevcontainerError(property === undefined ? { file, detail } : { file, property, detail }))

// The legacy keys as the devcontainers CLI reads them (`getDockerfile`,
// src/spec-configuration/configuration.ts; `getDockerContextPath`,
// src/spec-node/utils.ts): a top-level `dockerFile` wins over
// `build.dockerfile` and brings its own top-level `context`; without a
// context the build runs in the Dockerfile's folder.
const buildSource = (
  file: string,
  config: DevcontainerConfig,
  context: VariableContext,
  optionArgs: Readonly<Record<string, string>>,
  warn: (w: string) => void
) => {
  const folder = folderOf(file)
  const legacy = config.dockerFile !== undefined
  const dockerfile = legacy ? config.dockerFile : config.build?.dockerfile
  const dockerfileProperty = legacy ? "dockerFile" : "build.dockerfile"
  if (dockerfile === undefined) return fail(file, "build.dockerfile", "missing: a build needs a Dockerfile")
  const dockerfilePath = resolveInRepository(folder, dockerfile)
  if (dockerfilePath === undefined || dockerfilePath === ".") {
    return fail(file, dockerfileProperty, "must be a relative path inside the repository")
  }
  const contextProperty = legacy ? "context" : "build.context"
  const asked = legacy ? config.context : config.build?.context
  const contextPath =
    asked === undefined || asked === "" ? folderOf(dockerfilePath) || "." : resolveInRepository(folder, asked)
  if (contextPath === undefined) return fail(file, contextProperty, "must be a relative path inside the repository")
  const target = config.build?.target
  return Effect.succeed<DevcontainerSource>({
    _tag: "Build",
    dockerfile: dockerfilePath,
    context: contextPath,
    // build.options' `--build-arg`s, then build.args (which win).
    args: {
      ...substituteRecord(optionArgs, context, "build.options", warn),
      ...substituteRecord(config.build?.args ?? {}, context, "build.args", warn)
    },
    ...(target === undefined ? {} : { target })
  })
}

/**
 * Reads the located devcontainer.json into what admission checks: parsed and
 * decoded, the widening split from what every
 * repository gets (unless the repository is trusted, the widening is left
 * out and listed, or with `untrustedWidening: "refuse"` refused), the image
 * build or Compose files resolved inside the repository, the workspace folder
 * decided (Compose's defaults to "/").
 */
export const readDevcontainer = Effect.fn("Devcontainer.read")(function* (input: ResolveInput) {
  const file = input.located.path
  const { config, warnings: recovered } = yield* readDevcontainerText(file, input.located.text)
  const compose = isComposeConfig(config)
  const featureWarnings: Array<string> = []
  const features = yield* requestedFeatures(file, config, input.featuresRegistry, (w) => featureWarnings.push(w))
  const trusted =
    input.withheld === undefined && isTrustedRepository(input.trustedRepositories, input.host, input.repository)
  const request = requestOf(compose ? composeRequestConfig(config) : config)
  const [refused] = refusalsOf(request)
  if (!trusted && refused !== undefined && input.untrustedWidening === "refuse") {
    return yield* fail(file, refused.property, refusalDetail(refused, input.host, input.repository))
  }
  const withheld = trusted ? null : (input.withheld ?? untrustedHint(input.host, input.repository))
  const ignored =
    withheld === null
      ? []
      : request.found.map((found) => ({ property: found.property, detail: leftOutDetail(found, withheld) }))
  const warnings = [
    ...recovered,
    ...featureWarnings,
    ...ignoredWarnings(config),
    ...request.notes.map((note) => `${file}: ${note}`)
  ]
  for (const left of ignored) warnings.push(leftOutWarning(file, left))
  const warn = (warning: string) => warnings.push(warning)
  const repositoryName = input.repository.split("/").at(-1) ?? input.repository
  // Compose's default is "/" (the CLI's getRemoteWorkspaceFolder): the Compose file mounts the workspace.
  const defaultFolder = compose ? "/" : `/workspaces/${repositoryName}`
  const early: VariableContext = { containerWorkspaceFolder: defaultFolder, workspaceBasename: repositoryName }
  const asked =
    config.workspaceFolder === undefined
      ? undefined
      : substitute(config.workspaceFolder, early, "workspaceFolder", warn)
  const workspaceFolder =
    asked === undefined ? defaultFolder : compose && /^\/+$/.test(asked) ? "/" : containerFolder(asked)
  if (workspaceFolder === undefined) {
    return yield* fail(file, "workspaceFolder", "must be an absolute path below / in the container")
  }
  const context: VariableContext = { containerWorkspaceFolder: workspaceFolder, workspaceBasename: repositoryName }
  const described = (source: DevcontainerSource): DevcontainerSpec => ({
    path: file,
    source,
    warnings,
    workspaceFolder,
    trusted,
    widening: trusted ? request.widening : noWidening,
    options: request.options,
    ignored,
    withheld,
    repositoryName,
    features,
    config
  })
  const build = config.build !== undefined || config.dockerFile !== undefined
  if (compose) return described(yield* composeSource(file, config, warn))
  if (config.image !== undefined && build) return yield* fail(file, "image", "set either image or build, not both")
  if (config.image === undefined && !build) {
    return yield* fail(
      file,
      undefined,
      "neither image nor build.dockerfile is set: prbox needs one to make the container"
    )
  }
  return described(
    config.image !== undefined
      ? { _tag: "Image", image: substitute(config.image, context, "image", warn) }
      : yield* buildSource(file, config, context, request.options.buildArgs, warn)
  )
})
