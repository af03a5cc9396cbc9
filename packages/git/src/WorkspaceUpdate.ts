import * as NodePath from "node:path"
import { Effect } from "effect"
import { GitCommandFailed, UnsafeArgument } from "./Errors.ts"
import type { GitOutput, GitRun } from "./Git.ts"
import { commitPattern } from "./GitFiles.ts"
import { stderrTail } from "./Redact.ts"

/** Where `--force` keeps the workspace's old head: `prbox/before-update-<n>`. */
export const KEEP_BRANCH_PREFIX = "prbox/before-update-"

export interface WorkspaceState {
  /** The commit checked out now. */
  readonly head: string
  /** Tracked files with changes and untracked files, relative to the workspace; empty when clean. */
  readonly changedFiles: ReadonlyArray<string>
}

/**
 * Paths of `git status --porcelain=v1 -z`: `XY path` entries, NUL-separated;
 * a rename or copy is followed by its source path, listed as changed too.
 */
export const parsePorcelainZ = (output: string): Array<string> => {
  const fields = output.split("\0")
  const paths: Array<string> = []
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i] ?? ""
    if (entry.length < 4) continue
    paths.push(entry.slice(3))
    if (entry[0] === "R" || entry[0] === "C") {
      const source = fields[++i]
      if (source !== undefined && source !== "") paths.push(source)
    }
  }
  return paths
}

export type WithMirrorLock = (mirrorPath: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

const refuse = (operation: string, detail: string) => new UnsafeArgument({ operation, detail })
const checkPath = (operation: string, path: string) =>
  NodePath.isAbsolute(path) ? Effect.void : Effect.fail(refuse(operation, "the workspace must be an absolute path"))
export const checkCommit = (operation: string, commit: string) =>
  commitPattern.test(commit)
    ? Effect.void
    : Effect.fail(refuse(operation, "the commit must be a full hexadecimal object id"))

/** A git command's non-zero exit as a failure, with its (redacted) stderr. */
export const failure = (args: ReadonlyArray<string>, output: GitOutput) =>
  new GitCommandFailed({ operation: `git ${args[0]}`, detail: stderrTail(output.stderr), exitCode: output.exitCode })

/**
 * The steps of moving a workspace to a pull request's new head that only
 * read and write the workspace, with git run by `run`: this machine's git
 * on a workspace here, or git inside a sandbox's container on the copy the
 * container holds. The workspace may belong to another user than git's:
 * git is told the directory is safe.
 */
export const workspaceSteps = <E>(run: GitRun<E>, timeoutMs: number) => {
  // An explicit git dir: a workspace whose `.git` is gone must not fall through
  // to an enclosing repository.
  const inWorkspace = (path: string, args: ReadonlyArray<string>) =>
    run(
      [
        "-c",
        `safe.directory=${path}`,
        `--git-dir=${NodePath.posix.join(path, ".git")}`,
        `--work-tree=${path}`,
        ...args
      ],
      { cwd: path, timeoutMs }
    )

  const succeed = (path: string, args: ReadonlyArray<string>) =>
    Effect.flatMap(inWorkspace(path, args), (output) =>
      output.exitCode === 0 ? Effect.succeed(output) : Effect.fail(failure(args, output))
    )

  const workspaceState = Effect.fn("Workspaces.workspaceState")(function* (path: string) {
    yield* checkPath("workspaceState", path)
    const head = (yield* succeed(path, ["rev-parse", "--verify", "HEAD^{commit}"])).stdout.trim()
    const status = yield* succeed(path, ["status", "--porcelain=v1", "-z", "--untracked-files=all"])
    const result: WorkspaceState = { head, changedFiles: parsePorcelainZ(status.stdout) }
    return result
  })

  /** Whether the workspace's objects hold `commit` (and so, being a full clone, its history). */
  const hasCommit = Effect.fn("Workspaces.hasCommit")(function* (path: string, commit: string) {
    yield* checkPath("hasCommit", path)
    yield* checkCommit("hasCommit", commit)
    return (yield* inWorkspace(path, ["cat-file", "-e", `${commit}^{commit}`])).exitCode === 0
  })

  const isAncestor = Effect.fn("Workspaces.isAncestor")(function* (path: string, ancestor: string, descendant: string) {
    yield* checkPath("isAncestor", path)
    yield* checkCommit("isAncestor", ancestor)
    yield* checkCommit("isAncestor", descendant)
    const args = ["merge-base", "--is-ancestor", ancestor, descendant]
    const output = yield* inWorkspace(path, args)
    if (output.exitCode === 0) return true
    if (output.exitCode === 1) return false
    return yield* failure(args, output)
  })

  const fastForward = Effect.fn("Workspaces.fastForward")(function* (path: string, commit: string) {
    yield* checkPath("fastForward", path)
    yield* checkCommit("fastForward", commit)
    yield* succeed(path, ["merge", "--ff-only", "--quiet", commit])
  })

  /** `prbox/before-update-<n>` with n one past the highest such branch of the workspace. */
  const nextKeepBranch = Effect.fn("Workspaces.nextKeepBranch")(function* (path: string) {
    yield* checkPath("nextKeepBranch", path)
    // for-each-ref matches whole path components: list the directory, filter the names.
    const listed = yield* succeed(path, ["for-each-ref", "--format=%(refname:short)", "refs/heads/prbox/"])
    const taken = listed.stdout
      .split("\n")
      .flatMap((name) => (name.startsWith(KEEP_BRANCH_PREFIX) ? [name.slice(KEEP_BRANCH_PREFIX.length)] : []))
      .filter((n) => /^[1-9][0-9]*$/.test(n))
      .map(Number)
    return `${KEEP_BRANCH_PREFIX}${Math.max(0, ...taken) + 1}`
  })

  /**
   * Keeps the current head (with any local commits) on a new branch, then
   * resets the checked-out branch and tree to `commit`. Returns the branch.
   * Uncommitted changes are the caller's to refuse first: reset drops them.
   */
  const keepAndReset = Effect.fn("Workspaces.keepAndReset")(function* (path: string, commit: string) {
    yield* checkCommit("keepAndReset", commit)
    const branch = yield* nextKeepBranch(path)
    yield* succeed(path, ["branch", "--no-track", branch, "HEAD"])
    yield* succeed(path, ["reset", "--hard", "--quiet", commit])
    return branch
  })

  return { workspaceState, hasCommit, isAncestor, fastForward, nextKeepBranch, keepAndReset, succeed }
}

export type WorkspaceSteps<E> = ReturnType<typeof workspaceSteps<E>>
