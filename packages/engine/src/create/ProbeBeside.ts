import { splitAtMark } from "@prbox/domain"
import { Effect } from "effect"
import type { CommandInput, ContainerRuntimeShape, ExecOutcome, RuntimeExecOptions } from "../ContainerRuntime.ts"
import { NO_STEP, stepFrame } from "../UserEnvProbe.ts"

/** A command of the probe's user run in its first exec, with the exec's stdin, bounded on its own (`timeoutMs`). */
export interface BesideCommand {
  readonly script: string
  readonly args: ReadonlyArray<string>
  readonly stdin: Uint8Array
  readonly timeoutMs: number
  /** A step run after it in the same exec, with the environment the probe found (`StepAfter`). */
  readonly then?: StepAfter
}

/** A step's command, run with the probed environment and `env` over it, as its own exec would run it. */
export interface StepAfter {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly maxOutputBytes: number
}

/**
 * What one exec of BESIDE_SCRIPT gave each part of it: the probe (its
 * output; its deadline only while it ran), the command beside it, and the
 * step after them when it ran there (undefined: the caller runs it).
 */
export interface BesideOutcome {
  readonly probe: ExecOutcome
  readonly beside: ExecOutcome
  readonly step: ExecOutcome | undefined
}

const encoder = new TextEncoder()

/**
 * Runs `argv` (probeBesideArgv's with `stepMark`) and, once the probe's
 * output ended, answers on its stdin: the step (stepFrame, with what
 * `envOf` makes of that output; none when it gives nothing, the probe was
 * stopped or the container has no `env`), then `beside`'s own stdin. Its output is split at the
 * marked lines into the probe's, the command's and the step's.
 */
export const runProbeBeside = Effect.fn("SandboxService.probeBeside")(function* (
  runtime: ContainerRuntimeShape,
  containerId: string,
  argv: (stepMark: string) => ReadonlyArray<string>,
  options: Omit<RuntimeExecOptions, "stdin" | "onOutput" | "timeoutMs">,
  probeTimeoutMs: number,
  beside: BesideCommand & { readonly then: StepAfter },
  envOf: (probeOutput: string) => Readonly<Record<string, string>> | undefined
) {
  const { then } = beside
  const stepMark = crypto.randomUUID()
  let input: CommandInput | undefined
  let answer: ReadonlyArray<Uint8Array> | undefined
  let stepSent = false
  const send = () => {
    if (input === undefined || answer === undefined) return
    for (const chunk of answer) input.write(chunk)
    input.end()
  }
  const stdout = splitAtMark(stepMark, { before: options.maxOutputBytes, after: then.maxOutputBytes }, (state) => {
    const env = state === "0" ? envOf(stdout.before().text) : undefined
    const frame = env === undefined ? undefined : stepFrame(then.argv, { ...env, ...then.env })
    stepSent = frame !== undefined
    answer = [encoder.encode(frame ?? NO_STEP), beside.stdin]
    send()
  })
  const stderr = splitAtMark(stepMark, { before: options.maxOutputBytes, after: then.maxOutputBytes })
  const exec = runtime.exec(containerId, argv(stepMark), {
    ...options,
    timeoutMs: probeTimeoutMs + beside.timeoutMs + then.timeoutMs,
    stdin: (sink) => {
      input = sink
      send()
    },
    onOutput: (stream, chunk) => (stream === "stdout" ? stdout : stderr).add(chunk)
  })
  // The command beside keeps its own bound: past it with no status line, the exec is interrupted (its group killed).
  const besideBound = Effect.sleep(probeTimeoutMs + beside.timeoutMs).pipe(
    Effect.andThen(Effect.suspend(() => (stderr.word() === undefined ? Effect.void : Effect.never)))
  )
  const result: ExecOutcome = yield* Effect.raceFirst(
    exec,
    Effect.as(besideBound, { exitCode: null, stdout: "", stderr: "", truncated: false, timedOut: true, durationMs: 0 })
  )
  stdout.end()
  stderr.end()
  const status = stderr.word()
  const probeOut = stdout.before()
  const setupErr = stderr.before()
  // Past the probe's line the deadline was the command's or the step's; past the status line, the step's.
  const probe: ExecOutcome = {
    ...result,
    stdout: probeOut.text,
    stderr: setupErr.text,
    truncated: probeOut.truncated,
    timedOut: result.timedOut && stdout.word() === undefined
  }
  const besideOutcome: ExecOutcome = {
    ...result,
    exitCode: status === undefined ? result.exitCode : Number(status),
    stdout: "",
    stderr: setupErr.text,
    truncated: setupErr.truncated,
    timedOut: result.timedOut && status === undefined
  }
  const ranStep = stepSent && status === "0"
  const stepOut = stdout.after()
  const stepErr = stderr.after()
  const step: ExecOutcome | undefined = ranStep
    ? { ...result, stdout: stepOut.text, stderr: stepErr.text, truncated: stepOut.truncated || stepErr.truncated }
    : undefined
  return { probe, beside: besideOutcome, step } satisfies BesideOutcome
})
