import * as NodePath from "node:path"
import { statePaths } from "@prbox/domain"
import { Context, Effect, type FileSystem, Layer } from "effect"
import { type BaseDiff, type BaseDiffOptions, makeBaseDiff } from "./BaseDiff.ts"
import { makeBundleCommit } from "./Bundle.ts"
import { type CloneCheckout, type CreatedWorkspace, type CreateWorkspaceOptions, makeCreateWorkspace } from "./Clone.ts"
import { type CommitFiles, makeCommitFiles } from "./CommitFiles.ts"
import type { FetchError, WorkspaceError } from "./Errors.ts"
import type { Git } from "./Git.ts"
import { type FetchedPullRequest, type MirrorKey, makeMirrors, type ProgressOptions } from "./Mirrors.ts"
import type { PullRequestRef } from "./PullRequestRef.ts"

export type { BaseDiff, BaseDiffOptions } from "./BaseDiff.ts"
export type { CloneCheckout, CreatedWorkspace, CreateWorkspaceOptions } from "./Clone.ts"
export type { CommitEntry, CommitFiles } from "./CommitFiles.ts"
export type { FetchedPullRequest, MirrorKey, ProgressOptions } from "./Mirrors.ts"
export {
  KEEP_BRANCH_PREFIX,
  type WorkspaceState,
  type WorkspaceSteps,
  workspaceSteps
} from "./WorkspaceUpdate.ts"

export interface WorkspacesConfig {
  /** The daemon's private state directory (`$PRBOX_HOME`); mirrors live in its `statePaths(...).mirrors`. */
  readonly stateDir: string
  /** Bound on one network fetch; default 10 minutes. */
  readonly fetchTimeoutMs?: number
  /** Bound on one local git command (init, clone, checkout); default 5 minutes. */
  readonly localTimeoutMs?: number
}

/**
 * Bare mirrors of pull request repositories and workspaces cloned from them.
 * Fetches and clones of one mirror are serialised; different mirrors proceed
 * in parallel.
 */
export class Workspaces extends Context.Service<
  Workspaces,
  {
    /** Fetches the pull request's head ref, and nothing else, into the repository's mirror. */
    readonly fetchPullRequest: (
      ref: PullRequestRef,
      options?: ProgressOptions
    ) => Effect.Effect<FetchedPullRequest, FetchError>
    /**
     * A self-contained clone of the mirror (copied objects, its own `.git`
     * directory), checked out at `commit` on a new branch (unless `checkout`
     * is false), `origin` set to `originUrl`. A failed attempt leaves no
     * destination behind.
     */
    readonly createWorkspace: (options: CreateWorkspaceOptions) => Effect.Effect<CreatedWorkspace, WorkspaceError>
    /** Checks out a clone made with `checkout: false`, on this machine (no container has run on it). */
    readonly checkoutClone: (options: CloneCheckout) => Effect.Effect<void, WorkspaceError>
    /** Where the repository's mirror is (or would be): a sandbox's PR finds its mirror again from its row. */
    readonly mirrorPath: (key: MirrorKey) => string
    /**
     * A PR's own changes in its mirror: `git diff <merge-base> <head>` against
     * `options.base` or the remote's default branch (fetched into the mirror
     * when it is missing there). Never runs git in a workspace.
     */
    readonly diffAgainstBase: (
      mirrorPath: string,
      head: string,
      options: BaseDiffOptions
    ) => Effect.Effect<BaseDiff, FetchError>
    /**
     * The PR's base branch (`base`, else the remote's default branch) and its
     * tip in the mirror, fetched into it when it is missing there, or always
     * with `refresh`.
     */
    readonly baseCommit: (
      mirrorPath: string,
      base: string | undefined,
      options?: { readonly refresh?: boolean }
    ) => Effect.Effect<{ readonly branch: string; readonly tip: string }, FetchError>
    /** Reads files of a fetched commit in its mirror, without a checkout (symbolic links are refused). */
    readonly commitFiles: (mirrorPath: string, commit: string) => CommitFiles
    /**
     * A git bundle of `commit` from its mirror, leaving out the history of
     * `have` (commits the receiver holds; those the mirror lacks are skipped):
     * how a commit reaches a workspace on another machine. Only objects go in it.
     */
    readonly bundleCommit: (
      mirrorPath: string,
      commit: string,
      have: ReadonlyArray<string>
    ) => Effect.Effect<Uint8Array, WorkspaceError>
  }
>()("prbox/git/Workspaces") {
  static readonly layer = (config: WorkspacesConfig): Layer.Layer<Workspaces, never, Git | FileSystem.FileSystem> =>
    Layer.effect(Workspaces, make(config))
}

const make = Effect.fn("Workspaces.make")(function* (config: WorkspacesConfig) {
  const localTimeoutMs = config.localTimeoutMs ?? 5 * 60_000
  const fetchTimeoutMs = config.fetchTimeoutMs ?? 10 * 60_000
  const mirrors = yield* makeMirrors({
    mirrorsDir: statePaths(NodePath.resolve(config.stateDir)).mirrors,
    fetchTimeoutMs,
    localTimeoutMs
  })
  const { diffAgainstBase, baseCommit } = yield* makeBaseDiff(
    { local: localTimeoutMs, fetch: fetchTimeoutMs },
    mirrors.withMirrorLock
  )
  const { createWorkspace, checkoutClone } = yield* makeCreateWorkspace(localTimeoutMs, mirrors.withMirrorLock)
  const commitFiles = yield* makeCommitFiles(localTimeoutMs)
  const bundleCommit = yield* makeBundleCommit(localTimeoutMs, mirrors.withMirrorLock)
  return Workspaces.of({
    fetchPullRequest: mirrors.fetchPullRequest,
    mirrorPath: mirrors.mirrorPathOf,
    diffAgainstBase,
    baseCommit,
    createWorkspace,
    checkoutClone,
    commitFiles,
    bundleCommit
  })
})
