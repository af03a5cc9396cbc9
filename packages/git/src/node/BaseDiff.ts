import * as NodePath from "node:path"
import { parseNameStatus } from "@prbox/domain"
import { Effect, Result } from "effect"
import { classifyMirrorFailure } from "../Classify.ts"
import { GitCommandFailed, UnsafeArgument } from "../Errors.ts"
import { Git, type GitOutput } from "../Git.ts"
import { commitPattern } from "../GitFiles.ts"
import { stderrTail } from "../Redact.ts"
import { isSafeRefName } from "../RefName.ts"
import type { BaseDiff, BaseDiffOptions } from "../Workspaces.ts"
import { BASE_PREFIX, DEFAULT_BASE } from "./MirrorFiles.ts"

/** A name a base branch may have: a safe ref below the base prefix, never `HEAD` (the default's name) or an option. */
const isBaseBranch = (branch: string) =>
  isSafeRefName(`${BASE_PREFIX}${branch}`) && branch !== "HEAD" && !branch.startsWith("-")

type WithMirrorLock = (mirrorPath: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * A pull request's own changes, in its repository's mirror (prbox's own bare
 * repository, never a workspace): the diff from the merge-base of its head
 * and its base branch. The base branch is fetched into the mirror the first
 * time (the default branch found from the remote's HEAD), then reused.
 */
export const baseDiffs = Effect.fnUntraced(function* (
  timeouts: { readonly local: number; readonly fetch: number },
  withMirrorLock: WithMirrorLock
) {
  const git = yield* Git
  const inMirror = (mirrorPath: string, args: ReadonlyArray<string>, timeoutMs = timeouts.local) =>
    git.run([`--git-dir=${mirrorPath}`, "--literal-pathspecs", ...args], {
      cwd: NodePath.dirname(mirrorPath),
      timeoutMs,
      // The diff is read, never shown through a pager or a user's diff driver.
      env: { GIT_PAGER: "cat", GIT_EXTERNAL_DIFF: undefined }
    })
  const ok = (operation: string, mirrorPath: string) => (output: GitOutput) =>
    output.exitCode === 0
      ? Effect.succeed(output.stdout)
      : Effect.fail(classifyMirrorFailure(operation, output, mirrorPath))
  const gitOk = (operation: string, mirrorPath: string, args: ReadonlyArray<string>, timeoutMs?: number) =>
    inMirror(mirrorPath, args, timeoutMs).pipe(Effect.flatMap(ok(operation, mirrorPath)))

  /**
   * The remote's default branch: asked once (`ls-remote --symref`), then
   * remembered in the mirror; `remember` says it was just asked, so the
   * mirror does not have it yet.
   */
  const defaultBranch = (mirrorPath: string) =>
    Effect.gen(function* () {
      const known = yield* inMirror(mirrorPath, ["symbolic-ref", "--quiet", DEFAULT_BASE])
      if (known.exitCode === 0 && known.stdout.trim().startsWith(BASE_PREFIX)) {
        return { branch: known.stdout.trim().slice(BASE_PREFIX.length), remember: false }
      }
      const remote = yield* gitOk(
        "git ls-remote",
        mirrorPath,
        ["ls-remote", "--symref", "origin", "HEAD"],
        timeouts.fetch
      )
      const branch = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(remote)?.[1]
      if (branch === undefined) {
        return yield* new GitCommandFailed({
          operation: "git ls-remote",
          detail: "the remote does not name a default branch (HEAD); pass the base branch",
          exitCode: 0
        })
      }
      return { branch, remember: true }
    })

  /**
   * The base branch and its tip as the mirror holds them, in one git run and
   * without the mirror's lock, so an open reads it beside its PR's fetch (git
   * moves a ref into place whole: the read sees the tip before or after).
   * Undefined when the mirror has not both, or the tip is no commit: the
   * locked path asks (and fetches) then.
   */
  const knownBase = (mirrorPath: string, base: string | undefined) =>
    Effect.gen(function* () {
      if (base !== undefined && !isBaseBranch(base)) return undefined
      const name = base === undefined ? DEFAULT_BASE : `${BASE_PREFIX}${base}`
      const format = "--format=%(refname)%00%(symref)%00%(objectname)%00%(objecttype)"
      const listed = yield* inMirror(mirrorPath, ["for-each-ref", format, name])
      if (listed.exitCode !== 0) return undefined
      // The name is a pattern to git: it also lists refs below it.
      const line = listed.stdout.split("\n").find((entry) => entry.startsWith(`${name}\0`))
      const [, symref = "", tip = "", type] = (line ?? "").split("\0")
      const ref = base === undefined ? symref : name
      const branch = ref.slice(BASE_PREFIX.length)
      const found = ref.startsWith(BASE_PREFIX) && isBaseBranch(branch) && type === "commit" && commitPattern.test(tip)
      return found ? { branch, tip } : undefined
    }).pipe(Effect.orElseSucceed(() => undefined))

  /**
   * The base branch's tip in the mirror, fetched when the mirror does not
   * have it yet (or always: `refresh`); `remember` makes it the default base.
   * A tip already there is the one just read: no second read, as an open asks this every time.
   */
  const baseTip = (mirrorPath: string, branch: string, remember: boolean, refresh: boolean) =>
    Effect.gen(function* () {
      const ref = `${BASE_PREFIX}${branch}`
      if (!isBaseBranch(branch)) {
        return yield* new UnsafeArgument({
          operation: "base diff",
          detail: `${JSON.stringify(branch)} is not a branch name`
        })
      }
      const present = yield* inMirror(mirrorPath, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])
      const fetched = refresh || present.exitCode !== 0
      if (fetched) {
        yield* gitOk(
          "git fetch",
          mirrorPath,
          ["fetch", "--no-tags", "--no-write-fetch-head", "--end-of-options", "origin", `+refs/heads/${branch}:${ref}`],
          timeouts.fetch
        )
      }
      if (remember) yield* gitOk("git symbolic-ref", mirrorPath, ["symbolic-ref", DEFAULT_BASE, ref])
      if (!fetched) return present.stdout.trim()
      return (yield* gitOk("git rev-parse", mirrorPath, ["rev-parse", "--verify", `${ref}^{commit}`])).trim()
    })

  /**
   * The base branch (`base`, else the remote's default) and its tip in the
   * mirror, fetched when it is missing, or always with `refresh` (what trust
   * is judged against must be the branch as it is now).
   */
  const baseCommit = (mirrorPath: string, base: string | undefined, options?: { readonly refresh?: boolean }) =>
    Effect.gen(function* () {
      const known = options?.refresh === true ? undefined : yield* knownBase(mirrorPath, base)
      if (known !== undefined) return known
      return yield* withMirrorLock(mirrorPath)(
        Effect.gen(function* () {
          const { branch, remember } =
            base === undefined ? yield* defaultBranch(mirrorPath) : { branch: base, remember: false }
          return { branch, tip: yield* baseTip(mirrorPath, branch, remember, options?.refresh === true) }
        })
      )
    })

  /** The merge-base of `head` and the base branch (`base`, else the remote's default), with the branch's name. */
  const mergeBase = Effect.fn("Workspaces.mergeBase")(function* (mirrorPath: string, head: string, base?: string) {
    if (!commitPattern.test(head)) {
      return yield* new UnsafeArgument({
        operation: "base diff",
        detail: "the head must be a full hexadecimal object id"
      })
    }
    const { branch, tip } = yield* baseCommit(mirrorPath, base)
    const found = yield* inMirror(mirrorPath, ["merge-base", tip, head])
    const commit = found.stdout.trim()
    if (found.exitCode !== 0 || !commitPattern.test(commit)) {
      return yield* new GitCommandFailed({
        operation: "git merge-base",
        detail: stderrTail(found.stderr) || `the PR's head has no history in common with ${branch}`,
        exitCode: found.exitCode
      })
    }
    return { branch, mergeBase: commit }
  })

  const diffAgainstBase = Effect.fn("Workspaces.diffAgainstBase")(function* (
    mirrorPath: string,
    head: string,
    options: BaseDiffOptions
  ) {
    const { branch, mergeBase: from } = yield* mergeBase(mirrorPath, head, options.base)
    const pathspecs = options.paths.filter((path) => path !== ".")
    const diff = yield* gitOk("git diff", mirrorPath, [
      "-c",
      "core.quotePath=false",
      "diff",
      "--no-ext-diff",
      "--no-textconv",
      "--no-color",
      ...(options.stat ? ["--stat"] : []),
      from,
      head,
      "--",
      ...pathspecs
    ])
    const nameStatus = yield* gitOk("git diff", mirrorPath, [
      "diff",
      "--name-status",
      "-z",
      "-M",
      "--no-ext-diff",
      from,
      head,
      "--",
      ...pathspecs
    ])
    const files = parseNameStatus(nameStatus)
    if (Result.isFailure(files)) {
      return yield* new GitCommandFailed({ operation: "git diff", detail: files.failure, exitCode: 0 })
    }
    const result: BaseDiff = { mergeBase: from, baseBranch: branch, diff, files: files.success }
    return result
  })

  return { diffAgainstBase, mergeBase, baseCommit }
})
