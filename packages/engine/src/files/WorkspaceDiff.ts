import { boundText, MAX_READ_BYTES, type Sandbox, SandboxConflict, type SandboxId } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { Context, Effect, Layer } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { GitFailed, mapStoreErrors, RuntimeError, safeReason } from "../Errors.ts"
import { type ExecTarget, ExecTargets } from "../exec/ExecTarget.ts"
import { runScript, unexpectedExit } from "../exec/FileExec.ts"
import { DIFF_HEAD_SH, EXIT } from "../exec/FileScripts.ts"
import { checkWorkspacePath } from "../exec/WorkspaceResolve.ts"
import { Lifecycle } from "../Lifecycle.ts"
import type { DiffAgainst, DiffResult, PullRequestFile, PullRequestSide } from "./SandboxFiles.ts"

export interface DiffRequest {
  readonly against: DiffAgainst
  readonly paths: ReadonlyArray<string>
  readonly stat: boolean
  readonly maxBytes: number
  /** `base`: the PR's base branch when the code host tells it (issue 16); the mirror's default branch otherwise. */
  readonly baseBranch?: string
}

const short = (commit: string) => commit.slice(0, 12)

/**
 * `diff`: with `head`, the sandbox's changes since the PR's head, in its
 * container as its user (git must be in the image), untracked files
 * included; with `base`, the PR's own changes, by host git in the PR's
 * mirror (prbox's own repository), with the files it changes. Both keep
 * the diff's head when they cut it at `maxBytes` (after a whole line).
 * `pullRequestFile`: one side of a changed file (the merge-base's or the
 * head's), read from the mirror too, never from the workspace.
 */
const make = Effect.gen(function* () {
  const execTarget = yield* ExecTargets
  const runtime = yield* ContainerRuntime
  const workspaces = yield* Workspaces
  const config = yield* Config
  const { getRow } = yield* Lifecycle

  const headCommit = (target: ExecTarget) =>
    target.sourceCommit === null
      ? Effect.fail(
          new SandboxConflict({ id: target.id, reason: "it records no PR head commit (`prbox rebuild` records it)" })
        )
      : Effect.succeed(target.sourceCommit)

  const againstHead = (target: ExecTarget, head: string, paths: ReadonlyArray<string>, request: DiffRequest) =>
    Effect.gen(function* () {
      const outcome = yield* runScript(
        runtime,
        target,
        "diff",
        DIFF_HEAD_SH,
        [target.workspaceFolder, head, request.stat ? "1" : "0", String(request.maxBytes + 1), ...paths],
        { outputBytes: request.maxBytes + 1, env: { GIT_PAGER: "cat", GIT_LITERAL_PATHSPECS: "1" } }
      )
      switch (outcome.exitCode) {
        case 0:
          return outcome.stdout
        case EXIT.noGit:
          return yield* new SandboxConflict({
            id: target.id,
            reason: "git is not installed in the sandbox's image; a diff against the PR's head runs git there"
          })
        case EXIT.noHeadCommit:
          return yield* new SandboxConflict({
            id: target.id,
            reason: `the PR's head ${short(head)} is not in the workspace's repository (was its history rewritten?)`
          })
        case EXIT.gitFailed:
          return yield* new GitFailed({ operation: "diff in the sandbox", detail: "git failed in the workspace" })
        case EXIT.noTemporary:
          return yield* new RuntimeError({
            operation: "diff",
            detail: "no temporary folder could be made in the sandbox"
          })
        default:
          return yield* unexpectedExit("diff", outcome.exitCode)
      }
    })

  /** The sandbox's row and its repository's mirror (prbox's own repository: host git may run there). */
  const mirrorOf = (id: SandboxId) =>
    Effect.gen(function* () {
      const row = yield* getRow(id)
      const cfg = yield* config.load.pipe(
        Effect.mapError((error) => new SandboxConflict({ id, reason: error.message }))
      )
      if (row.host === null) {
        return yield* new SandboxConflict({ id, reason: "it records no host (a legacy sandbox); open the PR again" })
      }
      const mirrorPath = workspaces.mirrorPath({
        host: row.host,
        repository: row.repository,
        ...(cfg.profile === undefined ? {} : { profile: cfg.profile })
      })
      return { row, mirrorPath }
    }).pipe(mapStoreErrors("sandbox.diff"))

  /** The base branch the code host named for the PR; the remote's default branch when it named none. */
  const baseOf = (row: Sandbox, request?: Pick<DiffRequest, "baseBranch">) =>
    request?.baseBranch ?? row.baseRef ?? undefined

  const againstBase = (id: SandboxId, head: string, paths: ReadonlyArray<string>, request: DiffRequest) =>
    Effect.gen(function* () {
      const { row, mirrorPath } = yield* mirrorOf(id)
      const base = baseOf(row, request)
      const found = yield* workspaces
        .diffAgainstBase(mirrorPath, head, { paths, stat: request.stat, ...(base === undefined ? {} : { base }) })
        .pipe(
          Effect.mapError((error) => new GitFailed({ operation: "diff against the base", detail: safeReason(error) }))
        )
      return { mergeBase: found.mergeBase, baseBranch: found.baseBranch, diff: found.diff, files: found.files }
    })

  const diff = Effect.fn("SandboxFiles.diff")(function* (id: SandboxId, request: DiffRequest) {
    const target = yield* execTarget(id, "diff")
    const head = yield* headCommit(target)
    const paths = yield* Effect.forEach(request.paths, (path) =>
      Effect.map(checkWorkspacePath(target, path), (checked) => checked.relative)
    )
    const maxBytes = Math.min(request.maxBytes, MAX_READ_BYTES)
    const bounded = { ...request, maxBytes }
    const found =
      request.against === "head"
        ? {
            from: head,
            to: "workspace",
            description: `the workspace (untracked files included) against the PR's head ${short(head)}`,
            diff: yield* againstHead(target, head, paths, bounded)
          }
        : yield* Effect.map(againstBase(id, head, paths, bounded), (base) => ({
            from: base.mergeBase,
            to: head,
            description: `the PR's head ${short(head)} against its merge-base with ${base.baseBranch}`,
            diff: base.diff,
            files: base.files
          }))
    const cut = boundText(found.diff, maxBytes)
    const result: DiffResult = { against: request.against, ...found, diff: cut.text, truncated: cut.truncated }
    return result
  })

  const pullRequestFile = Effect.fn("SandboxFiles.pullRequestFile")(function* (
    id: SandboxId,
    request: { readonly side: PullRequestSide; readonly path: string }
  ) {
    const target = yield* execTarget(id, "reading the PR's files")
    const head = yield* headCommit(target)
    const { relative } = yield* checkWorkspacePath(target, request.path)
    if (relative === ".") return yield* new SandboxConflict({ id, reason: "the repository's root is not a file" })
    const { row, mirrorPath } = yield* mirrorOf(id)
    const commit =
      request.side === "head"
        ? head
        : (yield* workspaces
            .mergeBase(mirrorPath, head, baseOf(row))
            .pipe(
              Effect.mapError(
                (error) => new GitFailed({ operation: "diff against the base", detail: safeReason(error) })
              )
            )).mergeBase
    const text = yield* workspaces
      .commitFiles(mirrorPath, commit)
      .read(relative)
      .pipe(
        Effect.catchTag("UnsafeArgument", (error) =>
          Effect.fail(new SandboxConflict({ id, reason: `${relative}: ${error.detail}` }))
        ),
        Effect.mapError((error) =>
          error._tag === "SandboxConflict"
            ? error
            : new GitFailed({ operation: "reading the PR's file", detail: safeReason(error) })
        )
      )
    const binary = text?.includes("\0") === true
    const result: PullRequestFile = {
      path: relative,
      side: request.side,
      commit,
      present: text !== undefined,
      binary,
      content: binary ? "" : (text ?? "")
    }
    return result
  })

  return { diff, pullRequestFile }
})

export class WorkspaceDiff extends Context.Service<WorkspaceDiff, Effect.Success<typeof make>>()(
  "prbox/engine/WorkspaceDiff"
) {
  static readonly layer = Layer.effect(WorkspaceDiff, make)
}
