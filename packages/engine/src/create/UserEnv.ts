import type { EnvironmentPlan } from "@prbox/domain"
import { Effect } from "effect"
import { keptVariables } from "../CodeServerSpec.ts"
import type { ContainerRuntimeShape, ExecOutcome } from "../ContainerRuntime.ts"
import { type FirstOutcome, firstOutcome } from "../RunFirst.ts"
import { appliedEnv, PROBE_COMMANDS, PROBE_TIMED_OUT, parseProbe, probeArgv, probeBesideArgv } from "../UserEnvProbe.ts"
import { type BesideCommand, type BesideOutcome, runProbeBeside } from "./ProbeBeside.ts"

const PROBE_OUTPUT_BYTES = 1024 * 1024

/** What a probe found: the variables to run lifecycle commands with, or why there are none. */
export type ProbedEnv =
  | { readonly _tag: "Probed"; readonly env: Readonly<Record<string, string>> }
  | { readonly _tag: "NotProbed"; readonly warning: string | null }

/**
 * The sandbox user's environment, probed in the container as the plan's
 * `userEnvProbe` says (UserEnvProbe.ts), for its lifecycle commands: one
 * exec as that user, bounded in time (`timeoutSeconds`) and output. A shell that takes too
 * long or gives nothing is a warning, never a failure; Docker failing is
 * not a probe's answer and fails. What the shell printed is PR content:
 * it is parsed, never logged.
 */
export const probeUserEnv = (
  runtime: ContainerRuntimeShape,
  containerId: string,
  user: string,
  plan: EnvironmentPlan,
  timeoutSeconds: number
) => Effect.map(probeUserEnvAfter(runtime, containerId, user, plan, timeoutSeconds), ({ found }) => found)

/**
 * probeUserEnv with `first`'s argv run before the shell in the probe's
 * first exec (probeArgv's): what it found, and whether `first` failed
 * (`"failed"`) or did not run at all (no probe is due: `"not run"`).
 * `beside`: run beside the shell in that exec (probeBesideArgv's), its
 * outcome (`beside`, undefined when it did not run) the caller's to judge;
 * with its `then`, that step's outcome when it ran there (`step`).
 */
export const probeUserEnvAfter = Effect.fn("SandboxService.probeUserEnv")(function* (
  runtime: ContainerRuntimeShape,
  containerId: string,
  user: string,
  plan: EnvironmentPlan,
  timeoutSeconds: number,
  first?: ReadonlyArray<string>,
  beside?: BesideCommand
) {
  const mode = plan.userEnvProbe
  let besideOutcome: ExecOutcome | undefined
  let step: ExecOutcome | undefined
  const answer = (found: ProbedEnv, ran: FirstOutcome) => ({ found, first: ran, beside: besideOutcome, step })
  if (mode === undefined) return answer({ _tag: "NotProbed", warning: null }, "not run")
  const root = user.split(":")[0] === "0"
  const envFrom = (stdout: string, mark: string, separator: string) => {
    const parsed = parseProbe(stdout, mark, separator)
    return parsed === undefined
      ? undefined
      : appliedEnv(parsed.env, parsed.containerPath, root, new Set(keptVariables(plan)))
  }
  let ran: FirstOutcome = "not run"
  for (const [index, { command, separator }] of PROBE_COMMANDS.entries()) {
    const mark = crypto.randomUUID()
    const firstExec = index === 0
    const before: ReadonlyArray<string> | undefined = firstExec ? first : undefined
    const besideNow = firstExec ? beside : undefined
    const options = { user, cwd: plan.workspaceFolder, maxOutputBytes: PROBE_OUTPUT_BYTES }
    const timeoutMs = timeoutSeconds * 1000
    const then = besideNow?.then
    const outcome: BesideOutcome | undefined =
      besideNow === undefined
        ? undefined
        : then === undefined
          ? yield* Effect.map(
              runtime.exec(containerId, probeBesideArgv(mode, mark, command, timeoutSeconds, besideNow, before), {
                ...options,
                stdin: besideNow.stdin,
                timeoutMs: besideNow.timeoutMs + timeoutMs
              }),
              (result) => ({ probe: result, beside: result, step: undefined })
            )
          : yield* runProbeBeside(
              runtime,
              containerId,
              (stepMark) => probeBesideArgv(mode, mark, command, timeoutSeconds, besideNow, before, stepMark),
              options,
              timeoutMs,
              { ...besideNow, then },
              (stdout) => envFrom(stdout, mark, separator)
            )
    const result: ExecOutcome =
      outcome?.probe ??
      (yield* runtime.exec(containerId, probeArgv(mode, mark, command, before), { ...options, timeoutMs }))
    if (before !== undefined) ran = firstOutcome(result.stderr, before)
    if (outcome !== undefined) {
      besideOutcome = outcome.beside
      step = outcome.step
    }
    if (result.timedOut || (besideNow !== undefined && result.stderr.includes(PROBE_TIMED_OUT))) {
      return answer(
        {
          _tag: "NotProbed",
          warning: `userEnvProbe: the user's shell did not finish within ${timeoutSeconds} s (does a startup file wait for input?); lifecycle commands run without its environment`
        },
        ran
      )
    }
    const env = envFrom(result.stdout, mark, separator)
    if (env === undefined) continue
    return answer({ _tag: "Probed", env }, ran)
  }
  return answer(
    {
      _tag: "NotProbed",
      warning: "userEnvProbe: the user's shell gave no environment; lifecycle commands run without it"
    },
    ran
  )
})
