import type { EnvironmentPlan } from "@prbox/domain"
import { Effect } from "effect"
import { keptVariables } from "../CodeServerSpec.ts"
import type { ContainerRuntimeShape, ExecOutcome } from "../ContainerRuntime.ts"
import { type FirstOutcome, firstOutcome } from "../RunFirst.ts"
import { appliedEnv, PROBE_COMMANDS, PROBE_TIMED_OUT, parseProbe, probeArgv, probeBesideArgv } from "../UserEnvProbe.ts"

const PROBE_OUTPUT_BYTES = 1024 * 1024

/** A command of the probe's user run in its first exec, with the exec's stdin, bounded on its own (`timeoutMs`). */
export interface BesideCommand {
  readonly script: string
  readonly args: ReadonlyArray<string>
  readonly stdin: Uint8Array
  readonly timeoutMs: number
}

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
 * outcome (`beside`, undefined when it did not run) the caller's to judge.
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
  const answer = (found: ProbedEnv, ran: FirstOutcome) => ({ found, first: ran, beside: besideOutcome })
  if (mode === undefined) return answer({ _tag: "NotProbed", warning: null }, "not run")
  let ran: FirstOutcome = "not run"
  for (const [index, { command, separator }] of PROBE_COMMANDS.entries()) {
    const mark = crypto.randomUUID()
    const firstExec = index === 0
    const before: ReadonlyArray<string> | undefined = firstExec ? first : undefined
    const besideNow = firstExec ? beside : undefined
    const options = { user, cwd: plan.workspaceFolder, maxOutputBytes: PROBE_OUTPUT_BYTES }
    const result: ExecOutcome = yield* besideNow === undefined
      ? runtime.exec(containerId, probeArgv(mode, mark, command, before), {
          ...options,
          timeoutMs: timeoutSeconds * 1000
        })
      : runtime.exec(containerId, probeBesideArgv(mode, mark, command, timeoutSeconds, besideNow, before), {
          ...options,
          stdin: besideNow.stdin,
          timeoutMs: besideNow.timeoutMs + timeoutSeconds * 1000
        })
    if (before !== undefined) ran = firstOutcome(result.stderr, before)
    if (besideNow !== undefined) besideOutcome = result
    if (result.timedOut || (besideNow !== undefined && result.stderr.includes(PROBE_TIMED_OUT))) {
      return answer(
        {
          _tag: "NotProbed",
          warning: `userEnvProbe: the user's shell did not finish within ${timeoutSeconds} s (does a startup file wait for input?); lifecycle commands run without its environment`
        },
        ran
      )
    }
    const parsed = parseProbe(result.stdout, mark, separator)
    if (parsed === undefined) continue
    const root = user.split(":")[0] === "0"
    const env = appliedEnv(parsed.env, parsed.containerPath, root, new Set(keptVariables(plan)))
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
