import { Effect } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { RuntimeError } from "../Errors.ts"
import type { ExecTarget } from "./ExecTarget.ts"
import { scriptArgv } from "./FileScripts.ts"

/** How long one file or diff script may run before its process group is killed. */
export const FILE_OP_TIMEOUT_MS = 60_000

/** What a file script printed and how it ended (always with an exit code). */
export interface ScriptOutcome {
  readonly exitCode: number
  readonly stdout: string
}

export interface ScriptOptions {
  /** The most stdout the script can print by design (it bounds itself); more is a failure. */
  readonly outputBytes: number
  readonly stdin?: Uint8Array
  readonly env?: Readonly<Record<string, string>>
}

/**
 * Runs one FileScripts.ts script in the sandbox's container as its user, in
 * its workspace folder. Its output is its own bounded answer: a deadline or
 * output past the script's bound fails closed (never a partial answer).
 * Stderr is dropped: it may quote a file, and errors carry fixed reasons.
 */
export const runScript = (
  runtime: ContainerRuntimeShape,
  target: ExecTarget,
  operation: string,
  script: string,
  args: ReadonlyArray<string>,
  options: ScriptOptions
): Effect.Effect<ScriptOutcome, RuntimeError> =>
  runtime
    .exec(target.containerId, scriptArgv(script, args), {
      user: target.user,
      cwd: target.workspaceFolder,
      env: { LC_ALL: "C", ...options.env },
      timeoutMs: FILE_OP_TIMEOUT_MS,
      // Room for the runtime's own marker: a cut is seen as `truncated`, never mistaken for the answer.
      maxOutputBytes: options.outputBytes + 4096,
      ...(options.stdin === undefined ? {} : { stdin: options.stdin })
    })
    .pipe(
      Effect.flatMap((outcome) => {
        if (outcome.timedOut || outcome.exitCode === null) {
          return Effect.fail(
            new RuntimeError({
              operation,
              detail: `did not finish within ${FILE_OP_TIMEOUT_MS / 1000} s in the sandbox and was stopped`
            })
          )
        }
        if (outcome.truncated) {
          return Effect.fail(new RuntimeError({ operation, detail: "the sandbox answered more than it should have" }))
        }
        return Effect.succeed({ exitCode: outcome.exitCode, stdout: outcome.stdout })
      })
    )

/** A script's exit other than success and the refusals its caller knows. */
export const unexpectedExit = (operation: string, exitCode: number): RuntimeError =>
  new RuntimeError({
    operation,
    detail:
      exitCode === 127
        ? "a tool it needs is missing from the sandbox's image (sh, sed, find, head...)"
        : `failed in the sandbox (exit ${exitCode})`
  })
