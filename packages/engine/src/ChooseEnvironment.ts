import { DevcontainerError, type DevcontainerSpec, locateDevcontainer, readDevcontainer } from "@prbox/devcontainer"
import type { CommitFiles, PullRequestRef } from "@prbox/git"
import { Effect } from "effect"
import type { PrboxConfig } from "./Config.ts"
import { InvalidDevcontainer } from "./Errors.ts"

/**
 * Where a new sandbox's environment comes from, decided before it is
 * admitted (so bad PR content is refused with no row and no container):
 * the PR's devcontainer.json, else the user's configured image, else the
 * default image prbox builds itself.
 */
export type EnvironmentChoice =
  | { readonly _tag: "Devcontainer"; readonly spec: DevcontainerSpec }
  | { readonly _tag: "Configured"; readonly image: string }
  | { readonly _tag: "Default" }

/** The commit's files as the devcontainer reader asks for them; a read that fails names the path. */
const repoFiles = (files: CommitFiles) => {
  const failed = (path: string) => (error: { readonly message: string }) =>
    new DevcontainerError({ file: path, detail: error.message })
  return {
    read: (path: string) => files.read(path).pipe(Effect.mapError(failed(path))),
    list: (dir: string) => files.list(dir).pipe(Effect.mapError(failed(dir)))
  }
}

const isRoot = (path: string) => path === "" || path === "."

/** A build's context folder and Dockerfile must be in the PR's commit: found now, not by a failing build. */
const checkBuildInputs = (files: CommitFiles, spec: DevcontainerSpec) =>
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

export const chooseEnvironment = Effect.fn("SandboxService.chooseEnvironment")(function* (
  files: CommitFiles,
  ref: PullRequestRef,
  config: PrboxConfig,
  wanted: string | undefined
) {
  const invalid = (error: DevcontainerError) => new InvalidDevcontainer({ reason: error.message })
  const located = yield* locateDevcontainer(repoFiles(files), wanted).pipe(Effect.mapError(invalid))
  if (located !== undefined) {
    const spec = yield* readDevcontainer({
      located,
      host: ref.host,
      repository: ref.repository,
      trustedRepositories: config.trustedRepositories
    }).pipe(Effect.mapError(invalid))
    yield* checkBuildInputs(files, spec)
    return { _tag: "Devcontainer", spec } satisfies EnvironmentChoice
  }
  if (wanted !== undefined) {
    return yield* new InvalidDevcontainer({ reason: `--devcontainer ${wanted}: the PR has no devcontainer.json` })
  }
  const choice: EnvironmentChoice =
    config.image === undefined ? { _tag: "Default" } : { _tag: "Configured", image: config.image }
  return choice
})
