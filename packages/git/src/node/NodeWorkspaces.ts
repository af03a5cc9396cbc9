import * as NodePath from "node:path"
import { statePaths } from "@prbox/domain"
import { Effect, type FileSystem, Layer } from "effect"
import type { Git } from "../Git.ts"
import { Workspaces } from "../Workspaces.ts"
import { commitArchives } from "./Archive.ts"
import { baseDiffs } from "./BaseDiff.ts"
import { commitBundles } from "./Bundle.ts"
import { workspaceClones } from "./Clone.ts"
import { commitFileReaders } from "./CommitFiles.ts"
import { workspaceMirrors } from "./Mirrors.ts"
import { pushReviews } from "./PushReview.ts"

export interface WorkspacesConfig {
  /** The daemon's private state directory (`$PRBOX_HOME`); mirrors live in its `statePaths(...).mirrors`. */
  readonly stateDir: string
  /** Bound on one network fetch; default 10 minutes. */
  readonly fetchTimeoutMs?: number
  /** Bound on one local git command (init, clone, checkout); default 5 minutes. */
  readonly localTimeoutMs?: number
}

const make = Effect.fn("Workspaces.make")(function* (config: WorkspacesConfig) {
  const localTimeoutMs = config.localTimeoutMs ?? 5 * 60_000
  const fetchTimeoutMs = config.fetchTimeoutMs ?? 10 * 60_000
  const mirrors = yield* workspaceMirrors({
    mirrorsDir: statePaths(NodePath.resolve(config.stateDir)).mirrors,
    fetchTimeoutMs,
    localTimeoutMs
  })
  const { diffAgainstBase, mergeBase, baseCommit } = yield* baseDiffs(
    { local: localTimeoutMs, fetch: fetchTimeoutMs },
    mirrors.withMirrorLock
  )
  const { createWorkspace, checkoutClone } = yield* workspaceClones(localTimeoutMs, mirrors.withMirrorLock)
  const commitFiles = yield* commitFileReaders(localTimeoutMs)
  const bundleCommit = yield* commitBundles(localTimeoutMs, mirrors.withMirrorLock)
  const archiveCommit = yield* commitArchives(localTimeoutMs, mirrors.withMirrorLock)
  const reviewPush = yield* pushReviews(
    config.stateDir,
    { local: localTimeoutMs, fetch: fetchTimeoutMs },
    mirrors.withMirrorLock
  )
  return Workspaces.of({
    fetchPullRequest: mirrors.fetchPullRequest,
    fetchRemoteHead: mirrors.fetchRemoteHead,
    fetchRepository: mirrors.fetchRepository,
    archiveCommit,
    mirrorPath: mirrors.mirrorPathOf,
    diffAgainstBase,
    mergeBase,
    baseCommit,
    createWorkspace,
    checkoutClone,
    commitFiles,
    bundleCommit,
    reviewPush
  })
})

/** Workspaces on this machine: mirrors and clones under the state directory, through `Git` and the file system. */
export const layer = (config: WorkspacesConfig): Layer.Layer<Workspaces, never, Git | FileSystem.FileSystem> =>
  Layer.effect(Workspaces, make(config))
