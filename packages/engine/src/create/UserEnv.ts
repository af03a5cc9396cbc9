import type { EnvironmentPlan } from "@prbox/domain"
import { Effect } from "effect"
import { keptVariables } from "../CodeServerSpec.ts"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { appliedEnv, PROBE_COMMANDS, parseProbe, probeArgv } from "../UserEnvProbe.ts"

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
export const probeUserEnv = Effect.fn("SandboxService.probeUserEnv")(function* (
  runtime: ContainerRuntimeShape,
  containerId: string,
  user: string,
  plan: EnvironmentPlan,
  timeoutSeconds: number
) {
  const mode = plan.userEnvProbe
  if (mode === undefined) return { _tag: "NotProbed", warning: null } satisfies ProbedEnv
  for (const { command, separator } of PROBE_COMMANDS) {
    const mark = crypto.randomUUID()
    const result = yield* runtime.exec(containerId, probeArgv(mode, mark, command), {
      user,
      cwd: plan.workspaceFolder,
      timeoutMs: timeoutSeconds * 1000,
      maxOutputBytes: PROBE_OUTPUT_BYTES
    })
    if (result.timedOut) {
      return {
        _tag: "NotProbed",
        warning: `userEnvProbe: the user's shell did not finish within ${timeoutSeconds} s (does a startup file wait for input?); lifecycle commands run without its environment`
      } satisfies ProbedEnv
    }
    const parsed = parseProbe(result.stdout, mark, separator)
    if (parsed === undefined) continue
    const root = user.split(":")[0] === "0"
    const env = appliedEnv(parsed.env, parsed.containerPath, root, new Set(keptVariables(plan)))
    return { _tag: "Probed", env } satisfies ProbedEnv
  }
  return {
    _tag: "NotProbed",
    warning: "userEnvProbe: the user's shell gave no environment; lifecycle commands run without it"
  } satisfies ProbedEnv
})
