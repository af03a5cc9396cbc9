import { type Sandbox, SandboxConflict, type SandboxId } from "@prbox/domain"
import { pullRequestRefOf, type WorkspaceError, Workspaces } from "@prbox/git"
import { Context, Effect, Layer, Result } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { Workers } from "../create/Workers.ts"
import { Engines, otherEngineRefusal } from "../Engines.ts"
import { GitFailed, mapStoreErrors } from "../Errors.ts"
import { ExecTargets } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { containerWorkspaceGit, GitMissing } from "../workspace/ContainerWorkspaceGit.ts"
import type { WorkspaceGit } from "../workspace/WorkspaceGit.ts"
import { UpdateRefused } from "./Errors.ts"

/**
 * Runs the sandbox's `updateContentCommand` in its container: the failure's
 * reason, or null when it succeeded (or there is none to run).
 */
export type RunUpdateContent = (row: Sandbox, containerId: string) => Effect.Effect<string | null>

export interface UpdateReport {
  readonly sandbox: Sandbox
  readonly outcome: "up-to-date" | "fast-forwarded" | "forced"
  /** The workspace's head before the update, and after. */
  readonly from: string
  readonly to: string
  /** `--force`: where the old head and any local commits were kept. */
  readonly keptBranch: string | null
  readonly updateContent: { readonly ran: boolean; readonly error: string | null }
}

const FILES_LISTED = 50
const short = (commit: string) => commit.slice(0, 7)

/** `a, b and 3 more`: the refusal lists the changed files, cut so a message stays readable. */
export const listFiles = (files: ReadonlyArray<string>): string => {
  const shown = files.slice(0, FILES_LISTED).join(", ")
  return files.length > FILES_LISTED ? `${shown} and ${files.length - FILES_LISTED} more` : shown
}

/** Any git failure of an update, with its (redacted) message; an image without git (git runs there) is a refusal. */
const gitStep =
  (id: SandboxId, operation: string) =>
  <A, E extends { readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.mapError(effect, (error) =>
      error instanceof GitMissing
        ? new UpdateRefused({ id, reason: error.message, changedFiles: [] })
        : new GitFailed({ operation, detail: error.message })
    )

/**
 * `prbox update`: moves a running sandbox's workspace to its PR's new head,
 * fast-forward only unless `force` (which keeps the old head on a branch
 * first), never over the user's uncommitted changes; then runs the
 * sandbox's `updateContentCommand`.
 */
const make = Effect.gen(function* () {
  const { runUpdateContent } = yield* Workers
  const workspaces = yield* Workspaces
  const lifecycle = yield* Lifecycle
  const config = yield* Config
  const engines = yield* Engines
  const runtime = yield* ContainerRuntime
  const execTarget = yield* ExecTargets
  const { getRow } = lifecycle

  const conflict = (id: SandboxId, reason: string) => new SandboxConflict({ id, reason })
  const stillStopping = (id: SandboxId) =>
    Effect.mapError(lifecycle.failIfStopRequested(id), () =>
      conflict(id, "it is still stopping; retry after it has stopped")
    )

  /** Moves the workspace `git` works on; refused or failed, its refs and files stay as they were. */
  const moveWith = (
    row: Sandbox,
    containerId: string,
    git: WorkspaceGit<WorkspaceError | GitMissing>,
    force: boolean,
    refPattern: string
  ) =>
    Effect.gen(function* () {
      const { id } = row
      const say = (line: string) => lifecycle.emit(id, row.status, line)
      yield* say("fetching the PR's head")
      // The remote is the one recorded at open: the workspace's `origin` is the sandbox's to rewrite.
      if (row.remoteUrl === null) {
        return yield* conflict(id, "it was opened before prbox recorded its PR's remote; open the PR again")
      }
      const located = pullRequestRefOf(row, row.remoteUrl, refPattern)
      if (Result.isFailure(located)) return yield* conflict(id, located.failure.message)
      const state = yield* git.state.pipe(gitStep(id, "read the workspace"))
      const fetched = yield* workspaces
        .fetchPullRequest(located.success, { onProgress: (line) => Effect.ignore(say(line)) })
        .pipe(gitStep(id, "fetch the PR"))
      const from = state.head
      const to = fetched.commit
      const old = row.sourceCommit ?? from
      yield* git.bringCommit(fetched.mirrorPath, to, [...new Set([from, old])]).pipe(gitStep(id, "bring the new head"))
      const ancestor = (a: string, b: string) => git.isAncestor(a, b).pipe(gitStep(id, "compare the heads"))
      const base = { row, containerId, from, to }
      if (yield* ancestor(to, from)) {
        yield* say(`up to date at ${short(from)}`)
        return { ...base, outcome: "up-to-date" as const, keptBranch: null }
      }
      if (state.changedFiles.length > 0) {
        return yield* new UpdateRefused({
          id,
          reason: `the workspace has uncommitted changes (nothing was touched): ${listFiles(state.changedFiles)}; commit or stash them in the sandbox, then run \`prbox update ${id}\` again`,
          changedFiles: state.changedFiles
        })
      }
      const forcePushed = !(yield* ancestor(old, to))
      const localCommits = !forcePushed && !(yield* ancestor(from, to))
      if (!forcePushed && !localCommits) {
        yield* git.fastForward(to).pipe(gitStep(id, "fast-forward the workspace"))
        yield* say(`fast-forwarded ${short(from)}..${short(to)}`)
        return { ...base, outcome: "fast-forwarded" as const, keptBranch: null }
      }
      if (!force) {
        const branch = yield* git.nextKeepBranch.pipe(gitStep(id, "name the kept branch"))
        const reason = forcePushed
          ? `the PR was force-pushed: ${short(old)}..${short(to)} is not a fast-forward; \`prbox update --force ${id}\` keeps your commits on ${branch}`
          : `the workspace has commits that are not in the PR's new head: ${short(from)}..${short(to)} is not a fast-forward; \`prbox update --force ${id}\` keeps them on ${branch}`
        return yield* new UpdateRefused({ id, reason, changedFiles: [] })
      }
      const keptBranch = yield* git.keepAndReset(to).pipe(gitStep(id, "reset the workspace"))
      yield* say(`kept ${short(from)} on ${keptBranch}; reset to ${short(to)}`)
      return { ...base, outcome: "forced" as const, keptBranch }
    })

  /** The git part, under the sandbox's container permit: the workspace moves, or nothing does. */
  const moveWorkspace = (id: SandboxId, force: boolean, refPattern: string) =>
    Effect.gen(function* () {
      const row = yield* getRow(id)
      if (row.destroyFenced) {
        return yield* conflict(id, "an earlier destroy was not confirmed; run `prbox rm` to retry it")
      }
      const elsewhere = otherEngineRefusal(engines, row)
      if (elsewhere !== undefined) return yield* elsewhere
      const { containerId } = row
      if (row.status !== "running" || containerId === null || row.workspacePath === null) {
        return yield* conflict(id, `it is ${row.status}; start it first with \`prbox restart ${id}\``)
      }
      yield* stillStopping(id)
      // git runs in the container, as the sandbox user, on every engine: the
      // workspace's config, hooks and files are the sandbox's, and host git
      // would obey them. The new commit goes in as a bundle from the mirror.
      const git = containerWorkspaceGit(runtime, workspaces, yield* execTarget(id, "update"))
      return yield* moveWith(row, containerId, git, force, refPattern)
    })

  const update = Effect.fn("SandboxService.update")(function* (id: SandboxId, options: { readonly force: boolean }) {
    const cfg = yield* config.load.pipe(Effect.mapError((error) => conflict(id, error.message)))
    yield* stillStopping(id)
    const moved = yield* lifecycle.withContainer(id, moveWorkspace(id, options.force, cfg.pullRequestRefPattern))
    const { row, containerId, from, to, outcome, keptBranch } = moved
    if (outcome === "up-to-date") {
      return { sandbox: row, outcome, from, to, keptBranch, updateContent: { ran: false, error: null } }
    }
    // After the permit (the lock order puts the lifecycle permit first): a
    // stop that came meanwhile keeps its status, the row still records the head.
    const recorded = yield* lifecycle.serialized(
      Effect.flatMap(getRow(id), (current) => lifecycle.writeStatus(id, current.status, { sourceCommit: to }))
    )
    yield* lifecycle.emit(id, recorded.status, "running updateContentCommand")
    const error = yield* runUpdateContent(recorded, containerId)
    yield* lifecycle.emit(
      id,
      recorded.status,
      error === null ? "updateContentCommand done" : `updateContentCommand failed: ${error}`
    )
    const report: UpdateReport = {
      sandbox: recorded,
      outcome,
      from,
      to,
      keptBranch,
      updateContent: { ran: true, error }
    }
    return report
  }, mapStoreErrors("sandbox.update"))

  return update
})

export class Update extends Context.Service<Update, Effect.Success<typeof make>>()("prbox/engine/Update") {
  static readonly layer = Layer.effect(Update, make)
}
