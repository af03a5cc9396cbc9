import { Context, type Effect } from "effect"
import type { GitCommandFailed, GitTimeout } from "./Errors.ts"

export interface GitRunOptions {
  readonly cwd: string
  /** Added to (or, with `undefined`, removed from) the user's environment. */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly timeoutMs: number
  /** Each complete line of stderr (progress meters in their final state), as it arrives. */
  readonly onStderrLine?: (line: string) => Effect.Effect<void>
}

export interface GitOutput {
  readonly stdout: string
  readonly stderr: string
  readonly exitCode: number
}

/**
 * Runs git. A non-zero exit is an output, not a failure: callers classify it.
 * Fails only when git could not run (GitCommandFailed with a null exit code)
 * or ran out of time (GitTimeout, the process group killed).
 */
export class Git extends Context.Service<
  Git,
  {
    readonly run: (
      args: ReadonlyArray<string>,
      options: GitRunOptions
    ) => Effect.Effect<GitOutput, GitCommandFailed | GitTimeout>
  }
>()("prbox/git/Git") {}
