import { type Sandbox, SandboxConflict, type SandboxId } from "@prbox/domain"
import { pullRequestRefOf, Workspaces } from "@prbox/git"
import { Effect, Result } from "effect"
import { Config } from "./Config.ts"
import { GitFailed, mapStoreErrors, UpdateRefused } from "./Errors.ts"
import { Lifecycle } from "./Lifecycle.ts"
import type { Ownership } from "./Ownership.ts"

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

/** Any git failure of an update, with its (redacted) message. */
const gitStep =
  (operation: string) =>
  <A, E extends { readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.mapError(effect, (error) => new GitFailed({ operation, detail: error.message }))

/**
 * `prbox update`: moves a running sandbox's workspace to its PR's new head,
 * fast-forward only unless `force` (which keeps the old head on a branch
 * first), never over the user's uncommitted changes; then runs the
 * sandbox's `updateContentCommand`.
 */
export const makeUpdate = (ownership: Ownership, runUpdateContent: RunUpdateContent) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const lifecycle = yield* Lifecycle
    const config = yield* Config
    const { getRow } = lifecycle

    const conflict = (id: SandboxId, reason: string) => new SandboxConflict({ id, reason })
    const stillStopping = (id: SandboxId) =>
      Effect.mapError(lifecycle.failIfStopRequested(id), () =>
        conflict(id, "it is still stopping; retry after it has stopped")
      )

    /** The git part, under the sandbox's container permit: the workspace moves, or nothing does. */
    const moveWorkspace = (id: SandboxId, force: boolean, refPattern: string) =>
      Effect.gen(function* () {
        const row = yield* getRow(id)
        if (row.destroyFenced) {
          return yield* conflict(id, "an earlier destroy was not confirmed; run `prbox rm` to retry it")
        }
        const { containerId, workspacePath } = row
        if (row.status !== "running" || containerId === null || workspacePath === null) {
          return yield* conflict(id, `it is ${row.status}; start it first with \`prbox restart ${id}\``)
        }
        yield* stillStopping(id)
        const say = (line: string) => lifecycle.emit(id, row.status, line)
        yield* say("fetching the PR's head")
        const state = yield* workspaces.workspaceState(workspacePath).pipe(gitStep("read the workspace"))
        const located = pullRequestRefOf(row, state.originUrl, refPattern)
        if (Result.isFailure(located)) return yield* conflict(id, located.failure.message)
        const fetched = yield* workspaces
          .fetchPullRequest(located.success, { onProgress: (line) => Effect.ignore(say(line)) })
          .pipe(gitStep("fetch the PR"))
        const from = state.head
        const to = fetched.commit
        const old = row.sourceCommit ?? from
        yield* workspaces.bringCommit(workspacePath, fetched.mirrorPath, to).pipe(gitStep("bring the new head"))
        const ancestor = (a: string, b: string) =>
          workspaces.isAncestor(workspacePath, a, b).pipe(gitStep("compare the heads"))
        const base = { row, containerId, workspacePath, from, to }
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
          yield* workspaces.fastForward(workspacePath, to).pipe(gitStep("fast-forward the workspace"))
          yield* say(`fast-forwarded ${short(from)}..${short(to)}`)
          return { ...base, outcome: "fast-forwarded" as const, keptBranch: null }
        }
        if (!force) {
          const branch = yield* workspaces.nextKeepBranch(workspacePath).pipe(gitStep("name the kept branch"))
          const reason = forcePushed
            ? `the PR was force-pushed: ${short(old)}..${short(to)} is not a fast-forward; \`prbox update --force ${id}\` keeps your commits on ${branch}`
            : `the workspace has commits that are not in the PR's new head: ${short(from)}..${short(to)} is not a fast-forward; \`prbox update --force ${id}\` keeps them on ${branch}`
          return yield* new UpdateRefused({ id, reason, changedFiles: [] })
        }
        const keptBranch = yield* workspaces.keepAndReset(workspacePath, to).pipe(gitStep("reset the workspace"))
        yield* say(`kept ${short(from)} on ${keptBranch}; reset to ${short(to)}`)
        return { ...base, outcome: "forced" as const, keptBranch }
      }).pipe(
        // Whatever git wrote (objects, index, files) goes back to the sandbox user, refused or not.
        Effect.ensuring(
          Effect.flatMap(getRow(id), (row) =>
            row.workspacePath === null ? Effect.void : ownership.handBack(row.workspacePath)
          ).pipe(Effect.ignore)
        )
      )

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
