import { DevcontainerError, type DevcontainerSpec, locateDevcontainer, readDevcontainer } from "@prbox/devcontainer"
import type { SandboxEnvironment } from "@prbox/domain"
import { posixPath } from "@prbox/domain"
import type { Workspaces } from "@prbox/git"
import { Effect, type FileSystem } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { safeReason } from "../Errors.ts"
import { type FeatureInputs, type PullRequestFiles, readFeatureInputs } from "../features/LocalFeatures.ts"
import { InvalidDevcontainer } from "./Errors.ts"

/**
 * Where a new sandbox's environment comes from, decided before it is
 * admitted (so bad PR content is refused with no row and no container):
 * the PR's devcontainer.json, else the user's configured image, else the
 * default image prbox builds itself.
 */
export type EnvironmentChoice =
  | {
      readonly _tag: "Devcontainer"
      readonly spec: DevcontainerSpec
      readonly features: FeatureInputs
      /** What the choice was read from: a Compose project's files are copied from it (never the workspace). */
      readonly files?: RepositoryFiles
    }
  | { readonly _tag: "Configured"; readonly image: string }
  | { readonly _tag: "Default" }

/** Whether preparing the environment reads the checked-out files (a Dockerfile's build context). */
export const readsWorkspace = (choice: EnvironmentChoice): boolean =>
  choice._tag === "Devcontainer" && (choice.spec.source._tag === "Build" || choice.spec.source._tag === "Compose")

/** Read access to a repository's files: a fetched commit's (git) or a workspace's (on disk). */
export type RepositoryFiles = PullRequestFiles

/** Where a sandbox's PR lives: what `trustedRepositories` patterns are matched against. */
export interface RepositoryName {
  readonly host: string
  readonly repository: string
}

/** The files as the devcontainer reader asks for them; a read that fails names the path. */
const repoFiles = (files: RepositoryFiles) => {
  const failed = (path: string) => (error: { readonly message: string }) =>
    new DevcontainerError({ file: path, detail: error.message })
  return {
    read: (path: string) => files.read(path).pipe(Effect.mapError(failed(path))),
    list: (dir: string) => files.list(dir).pipe(Effect.mapError(failed(dir)))
  }
}

const isRoot = (path: string) => path === "" || path === "."

/** What a configuration is read from: devcontainer.json, and the Dockerfile it builds. */
const configurationFiles = (spec: DevcontainerSpec): ReadonlyArray<string> =>
  spec.source._tag === "Build" ? [spec.path, spec.source.dockerfile] : [spec.path]

/**
 * Whether the PR's configuration is the base branch's, byte for byte; why
 * not, for the log. A base that cannot be read counts as different.
 */
const sameAsBase = (
  files: RepositoryFiles,
  base: Effect.Effect<RepositoryFiles, { readonly message: string }>,
  spec: DevcontainerSpec
) =>
  Effect.gen(function* () {
    const baseFiles = yield* base
    for (const path of configurationFiles(spec)) {
      const [mine, theirs] = yield* Effect.all([files.read(path), baseFiles.read(path)])
      if (mine !== theirs) {
        return {
          same: false as const,
          why: `this PR changes ${path} from its base branch: the trusted repository's widening (trustedRepositories) applies to the configuration as the base branch has it, so it is not applied here until the change is merged`,
          withheld: `the repository is trusted, but this PR changes ${path} from its base branch: new in this PR, it is honoured once it is on the base branch`
        }
      }
    }
    return { same: true as const }
  }).pipe(
    Effect.catch((error) =>
      Effect.succeed({
        same: false as const,
        why: `the base branch's configuration could not be read (${error.message}): the trusted repository's widening is not applied`,
        withheld: "the repository is trusted, but its base branch's configuration could not be read to compare"
      })
    )
  )

/** A build's context folder and Dockerfile must be in the PR's commit: found now, not by a failing build. */
const checkBuildInputs = (files: RepositoryFiles, spec: DevcontainerSpec) =>
  Effect.gen(function* () {
    if (spec.source._tag !== "Build") return
    const { context, dockerfile } = spec.source
    const missing = (property: string, path: string) =>
      new InvalidDevcontainer({ reason: `${spec.path}: ${property}: ${path} is not in the pull request` })
    const unreadable = (error: { readonly message: string }) =>
      new InvalidDevcontainer({ reason: `${spec.path}: ${error.message}` })
    if (!isRoot(context) && (yield* files.list(context).pipe(Effect.mapError(unreadable))) === undefined) {
      return yield* missing("build.context", context)
    }
    if ((yield* files.read(dockerfile).pipe(Effect.mapError(unreadable))) === undefined) {
      return yield* missing("build.dockerfile", dockerfile)
    }
  })

/**
 * `files` are the PR's (its commit, or a running sandbox's workspace);
 * `base` reads its base branch's, asked only for a repository the user trusts.
 */
export const chooseEnvironment = Effect.fn("SandboxService.chooseEnvironment")(function* (
  files: RepositoryFiles,
  ref: RepositoryName,
  config: PrboxConfig,
  wanted: string | undefined,
  base: Effect.Effect<RepositoryFiles, { readonly message: string }>
) {
  const invalid = (error: DevcontainerError) => new InvalidDevcontainer({ reason: error.message })
  const located = yield* locateDevcontainer(repoFiles(files), wanted).pipe(Effect.mapError(invalid))
  if (located !== undefined) {
    const read = (withheld?: string) =>
      readDevcontainer({
        located,
        host: ref.host,
        repository: ref.repository,
        trustedRepositories: config.trustedRepositories,
        untrustedWidening: config.untrustedWidening,
        ...(config.featuresRegistry === undefined ? {} : { featuresRegistry: config.featuresRegistry }),
        ...(withheld === undefined ? {} : { withheld })
      })
    const asTrusted = yield* read().pipe(Effect.mapError(invalid))
    // Trust is the repository's: its widening holds for the configuration as the base branch has it.
    const asBase = asTrusted.trusted ? yield* sameAsBase(files, base, asTrusted) : { same: true as const }
    const spec = asBase.same
      ? asTrusted
      : yield* read(asBase.withheld).pipe(
          Effect.map((read) => ({ ...read, warnings: [...read.warnings, asBase.why] })),
          Effect.mapError((error) => new InvalidDevcontainer({ reason: `${asBase.why}; ${error.message}` }))
        )
    yield* checkBuildInputs(files, spec)
    const features = yield* readFeatureInputs(files, spec.path, spec.features).pipe(
      Effect.mapError((error) => new InvalidDevcontainer({ reason: error.message }))
    )
    return { _tag: "Devcontainer", spec, features, files } satisfies EnvironmentChoice
  }
  if (wanted !== undefined) {
    return yield* new InvalidDevcontainer({ reason: `--devcontainer ${wanted}: the PR has no devcontainer.json` })
  }
  const choice: EnvironmentChoice =
    config.image === undefined ? { _tag: "Default" } : { _tag: "Configured", image: config.image }
  return choice
})

/** The named configuration (`.devcontainer/<name>/devcontainer.json`) a sandbox was made from, if any. */
export const configurationName = (environment: SandboxEnvironment | null): string | undefined =>
  /^\.devcontainer\/([^/]+)\/devcontainer\.json$/.exec(environment?.path ?? "")?.[1]

/**
 * The files of a PR's base branch (`baseRef`, else the remote's default) in
 * its mirror, where host git may run: what trust is judged against.
 */
export const baseBranchFiles = (workspaces: Workspaces["Service"], mirrorPath: string, baseRef: string | undefined) =>
  Effect.map(workspaces.baseCommit(mirrorPath, baseRef, { refresh: true }), ({ tip }) =>
    workspaces.commitFiles(mirrorPath, tip)
  ).pipe(Effect.mapError((error) => ({ message: safeReason(error) })))

const MAX_FILE_BYTES = 1024 * 1024

/**
 * A workspace's files on disk, for a rebuild (the user may have edited
 * devcontainer.json). PR content: a path that goes through a symbolic link
 * anywhere is refused, so nothing outside the workspace is ever read.
 */
export const workspaceFiles = (fs: FileSystem.FileSystem, workspacePath: string): RepositoryFiles => {
  const resolved = (path: string) =>
    Effect.gen(function* () {
      const lexical = posixPath.join(workspacePath, path)
      const real = yield* fs.realPath(lexical).pipe(
        Effect.map((value): string | undefined => value),
        Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined)),
        Effect.mapError(() => ({ message: `${path} cannot be read` }))
      )
      if (real === undefined) return undefined
      const root = yield* fs
        .realPath(workspacePath)
        .pipe(Effect.mapError(() => ({ message: "the workspace cannot be read" })))
      if (real !== posixPath.join(root, path))
        return yield* Effect.fail({ message: `${path} goes through a symbolic link` })
      const info = yield* fs.stat(real).pipe(Effect.mapError(() => ({ message: `${path} cannot be read` })))
      return { real, info }
    })
  return {
    read: (path) =>
      Effect.gen(function* () {
        const found = yield* resolved(path)
        if (found === undefined || found.info.type !== "File") return undefined
        if (Number(found.info.size) > MAX_FILE_BYTES) {
          return yield* Effect.fail({ message: `${path} is larger than ${MAX_FILE_BYTES} bytes` })
        }
        return yield* fs.readFileString(found.real).pipe(Effect.mapError(() => ({ message: `${path} cannot be read` })))
      }),
    readBytes: (path, maxBytes) =>
      Effect.gen(function* () {
        const found = yield* resolved(path)
        if (found === undefined || found.info.type !== "File") return undefined
        if (Number(found.info.size) > maxBytes) {
          return yield* Effect.fail({ message: `${path} is larger than ${maxBytes} bytes` })
        }
        return yield* fs.readFile(found.real).pipe(Effect.mapError(() => ({ message: `${path} cannot be read` })))
      }),
    list: (dir) =>
      Effect.gen(function* () {
        const found = yield* resolved(dir)
        if (found === undefined || found.info.type !== "Directory") return undefined
        const names = yield* fs
          .readDirectory(found.real)
          .pipe(Effect.mapError(() => ({ message: `${dir} cannot be read` })))
        return yield* Effect.forEach(names, (name) =>
          fs.stat(posixPath.join(found.real, name)).pipe(
            Effect.map((info) => ({ name, type: info.type === "Directory" ? ("dir" as const) : ("file" as const) })),
            Effect.mapError(() => ({ message: `${dir}/${name} cannot be read` }))
          )
        )
      })
  }
}
