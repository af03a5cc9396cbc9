import { type PullRequestLookup, type Sandbox, SandboxConflict, type SandboxId, sameCommit } from "@prbox/domain"
import {
  type PullRequestLocation,
  PullRequests,
  type PushCommit,
  pullRequestRefOf,
  redactCredentials,
  Workspaces
} from "@prbox/git"
import { Context, Effect, Layer, Result } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { Engines, otherEngineRefusal } from "../Engines.ts"
import { GitFailed, mapStoreErrors } from "../Errors.ts"
import { ExecTargets } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { bundleFromSandbox } from "../workspace/ContainerPush.ts"
import { containerWorkspaceGit, GitMissing } from "../workspace/ContainerWorkspaceGit.ts"
import { PushRefused } from "./Errors.ts"
import { pushDestination } from "./PushDestination.ts"
import { listFiles } from "./Update.ts"

export interface PushOptions {
  /** False: the commits are checked and shown, nothing is pushed. */
  readonly confirm: boolean
  /** The branch of the PR's remote to push to (a plain git remote needs it). */
  readonly to?: string
  /** With `confirm`: the tip that was shown; a sandbox whose commits changed since is refused. */
  readonly expectTip?: string
}

export interface PushReport {
  readonly sandbox: Sandbox
  /** Where the commits go (credentials never in it) and the branch. */
  readonly remote: string
  readonly branch: string
  /** The PR's head the sandbox started from: the commits go on top of it, and the push's lease expects it. */
  readonly head: string
  readonly tip: string
  /** Newest first; their text is the sandbox's (strip before printing). */
  readonly commits: ReadonlyArray<PushCommit>
  readonly pushed: boolean
}

const short = (commit: string) => commit.slice(0, 7)

/**
 * `prbox push`: the sandbox's new commits on top of its PR's head leave the
 * container as a bundle made by its own git, are checked on this machine in
 * a temporary repository (never in the mirror, never in the workspace),
 * shown, and, confirmed, pushed with the user's own credentials to the PR's
 * source branch, leased on the head the row records. Every refusal changes nothing.
 */
const make = Effect.gen(function* () {
  const workspaces = yield* Workspaces
  const pullRequests = yield* PullRequests
  const lifecycle = yield* Lifecycle
  const config = yield* Config
  const engines = yield* Engines
  const runtime = yield* ContainerRuntime
  const execTarget = yield* ExecTargets
  const { getRow } = lifecycle

  const conflict = (id: SandboxId, reason: string) => new SandboxConflict({ id, reason })
  const refuse = (id: SandboxId, kind: PushRefused["kind"], reason: string, changedFiles: ReadonlyArray<string> = []) =>
    new PushRefused({ id, kind, reason, changedFiles })
  const gitStep =
    (id: SandboxId, operation: string) =>
    <A, E extends { readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.mapError(effect, (error) =>
        error instanceof GitMissing
          ? conflict(id, "the sandbox's image has no git; `prbox push` runs git inside the sandbox")
          : new GitFailed({ operation, detail: error.message })
      )

  /**
   * Where the row's PR stands now: its mirror (the PR's ref fetched into
   * it), refused when the PR's head (the ref's, the service's) is past the
   * head the row records. A head the sandbox's history already holds (the
   * commits it pushed, before a plain remote's PR ref or the service's
   * cached answer follows) has not moved.
   */
  const prNow = (
    row: Sandbox,
    head: string,
    remoteUrl: string,
    refPattern: string,
    lookup: PullRequestLookup | undefined,
    git: ReturnType<typeof containerWorkspaceGit>
  ) =>
    Effect.gen(function* () {
      const { id } = row
      const located = pullRequestRefOf(row, remoteUrl, refPattern)
      if (Result.isFailure(located)) return yield* conflict(id, located.failure.message)
      const fetched = yield* workspaces.fetchPullRequest(located.success).pipe(gitStep(id, "fetch the PR"))
      const heads = [fetched.commit, ...(lookup?._tag === "Known" ? [lookup.info.headSha] : [])]
      for (const now of heads) {
        if (sameCommit(now, head)) continue
        const full = /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(now)
        const contained =
          full &&
          (yield* git.hasCommit(now).pipe(gitStep(id, "read the workspace"))) &&
          (yield* git.isAncestor(now, head).pipe(gitStep(id, "compare the heads")))
        if (!contained) {
          return yield* refuse(
            id,
            "pull-request-moved",
            `the PR moved to ${short(now)} since the sandbox's ${short(head)}; run \`prbox update ${id}\` first, then push again`
          )
        }
      }
      return fetched.mirrorPath
    })

  const pushFrom = (id: SandboxId, options: PushOptions, refPattern: string) =>
    Effect.gen(function* () {
      const row = yield* getRow(id)
      if (row.destroyFenced) {
        return yield* conflict(id, "an earlier destroy was not confirmed; run `prbox rm` to retry it")
      }
      const elsewhere = otherEngineRefusal(engines, row)
      if (elsewhere !== undefined) return yield* elsewhere
      if (row.status !== "running" || row.containerId === null || row.workspacePath === null) {
        return yield* conflict(id, `it is ${row.status}; start it first with \`prbox restart ${id}\``)
      }
      const head = row.sourceCommit
      if (head === null || row.remoteUrl === null || row.host === null) {
        return yield* conflict(id, "it was opened before prbox recorded its PR's head and remote; open the PR again")
      }
      const at: PullRequestLocation = {
        provider: row.provider,
        host: row.host,
        repository: row.repository,
        pullRequest: row.pullRequest
      }
      const lookup = row.provider === "git" ? undefined : yield* pullRequests.lookup(at)
      const destination = pushDestination(row, options.to, lookup)
      if (destination._tag === "Nowhere") return yield* refuse(id, "no-destination", destination.reason)
      // git runs in the container, as the sandbox user: the workspace is the sandbox's.
      const target = yield* execTarget(id, "push")
      const git = containerWorkspaceGit(runtime, workspaces, target)
      const mirrorPath = yield* prNow(row, head, row.remoteUrl, refPattern, lookup, git)
      const state = yield* git.state.pipe(gitStep(id, "read the workspace"))
      if (state.changedFiles.length > 0) {
        return yield* refuse(
          id,
          "uncommitted-changes",
          `the workspace has uncommitted changes: ${listFiles(state.changedFiles)}; commit them in the sandbox (or stash them), then push again`,
          state.changedFiles
        )
      }
      if (state.head === head) {
        return yield* refuse(id, "no-new-commits", `the sandbox has no commits on the PR's head ${short(head)}`)
      }
      if (!(yield* git.isAncestor(head, state.head).pipe(gitStep(id, "compare the heads")))) {
        return yield* refuse(
          id,
          "not-fast-forward",
          `the sandbox's ${short(state.head)} does not build on the PR's head ${short(head)} (a rebase or a reset?); push only commits on top of it`
        )
      }
      if (options.confirm && options.expectTip !== undefined && options.expectTip !== state.head) {
        return yield* refuse(
          id,
          "changed-since-shown",
          `the sandbox's commits changed since they were shown (now ${short(state.head)}); run \`prbox push ${id}\` again`
        )
      }
      const bundle = yield* bundleFromSandbox(runtime, target, head).pipe(gitStep(id, "bundle the sandbox's commits"))
      const { target: push } = destination
      const review = yield* workspaces
        .reviewPush({ mirrorPath, bundle, head, ...(options.confirm ? { push } : {}) })
        .pipe(
          Effect.mapError((error) =>
            error._tag === "PushRejected"
              ? refuse(id, error.kind, error.detail)
              : new GitFailed({ operation: "check the sandbox's commits", detail: error.message })
          )
        )
      const report: PushReport = {
        sandbox: row,
        remote: redactCredentials(push.url),
        branch: push.branch,
        head,
        tip: review.tip,
        commits: review.commits,
        pushed: review.pushed
      }
      return report
    })

  return Effect.fn("SandboxService.push")(function* (id: SandboxId, options: PushOptions) {
    const cfg = yield* config.load.pipe(Effect.mapError((error) => conflict(id, error.message)))
    yield* Effect.mapError(lifecycle.failIfStopRequested(id), () =>
      conflict(id, "it is still stopping; retry after it has stopped")
    )
    const report = yield* lifecycle.withContainer(id, pushFrom(id, options, cfg.pullRequestRefPattern))
    if (!report.pushed) return report
    const line = `pushed ${report.commits.length} commit(s) ${short(report.head)}..${short(report.tip)} to ${report.branch} of ${report.remote}`
    // The PR's head is now the pushed tip: a later update or push starts from it.
    const recorded = yield* lifecycle.serialized(
      Effect.flatMap(getRow(id), (current) => lifecycle.writeStatus(id, current.status, { sourceCommit: report.tip }))
    )
    yield* lifecycle.emit(id, recorded.status, line)
    return { ...report, sandbox: recorded }
  }, mapStoreErrors("sandbox.push"))
})

export class Push extends Context.Service<Push, Effect.Success<typeof make>>()("prbox/engine/Push") {
  static readonly layer = Layer.effect(Push, make)
}
