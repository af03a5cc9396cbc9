import { Context, type Effect } from "effect"
import type { GitCommandFailed, GitTimeout } from "./Errors.ts"

export interface GitRunOptions {
  readonly cwd: string
  /** Added to (or, with `undefined`, removed from) the user's environment. */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly timeoutMs: number
  /** Each complete line of stderr (progress meters in their final state), as it arrives. */
  readonly onStderrLine?: (line: string) => Effect.Effect<void>
  /** Fed to git's stdin (then closed); none: stdin is closed from the start. */
  readonly stdin?: Uint8Array
  /** Runs git as this user, in `cwd` (a root daemon writing a workspace for the sandbox user; see NodeGit). */
  readonly asUser?: GitUser
}

/** A user git runs as, by ids. */
export interface GitUser {
  readonly uid: number
  readonly gid: number
}

/**
 * Variables that point git at another repository than the one named (set by
 * hooks or shells): cleared for every git prbox runs, here or in a sandbox.
 */
export const REPOSITORY_ENV = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE"
] as const

export interface GitOutput {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/** One git command: its output whatever its exit code; `E` when it could not run to its end. */
export type GitRun<E> = (args: ReadonlyArray<string>, options: GitRunOptions) => Effect.Effect<GitOutput, E>

/**
 * Runs git. A non-zero exit is an output, not a failure: callers classify it.
 * Fails only when git could not run (GitCommandFailed with a null exit code)
 * or ran out of time (GitTimeout, the process group killed).
 */
export class Git extends Context.Service<
  Git,
  {
    readonly run: GitRun<GitCommandFailed | GitTimeout>
  }
>()("prbox/git/Git") {}
