import type { EnvironmentPlan, LifecycleHook, LifecycleStep, Sandbox, SingleCommand } from "@prbox/domain"
import { Context, Effect, Layer } from "effect"
import { ContainerRuntime, type ExecOutcome } from "../ContainerRuntime.ts"
import { mapStoreErrors, SetupFailed } from "../Errors.ts"
import { Lifecycle } from "../Lifecycle.ts"
import type { StepAfter } from "./ProbeBeside.ts"

const STEP_TIMEOUT_MS = 30 * 60_000
const STEP_OUTPUT_BYTES = 1024 * 1024

/** The create-time hooks, once per container, in the spec's order; `postStartCommand` runs on every start. */
const CREATE_HOOKS: ReadonlyArray<LifecycleHook> = ["onCreateCommand", "updateContentCommand", "postCreateCommand"]

const argvOf = (command: SingleCommand): ReadonlyArray<string> =>
  command._tag === "Shell" ? ["/bin/sh", "-c", command.command] : command.argv

const shown = (command: SingleCommand): string => (command._tag === "Shell" ? command.command : command.argv.join(" "))

/** A step that ran elsewhere (in the probe's exec), and what its exec gave. */
export interface RanStep {
  readonly step: LifecycleStep
  readonly outcome: ExecOutcome
}

/** `step` as the probe's exec runs it after its checkout (runStep's command, user and bounds); none for parallel entries. */
export const stepAfter = (step: LifecycleStep, plan: EnvironmentPlan): StepAfter | undefined =>
  step.command._tag === "Parallel"
    ? undefined
    : { argv: argvOf(step.command), env: plan.remoteEnv, timeoutMs: STEP_TIMEOUT_MS, maxOutputBytes: STEP_OUTPUT_BYTES }

/** How a step reads in the log: the user's own setup commands as they are, the PR's with their hook. */
const describe = (step: LifecycleStep): string => {
  const what =
    step.command._tag === "Parallel"
      ? step.command.entries.map((entry) => `${entry.name}: ${shown(entry.command)}`).join("; ")
      : shown(step.command)
  return step.origin === "config.json" ? what : `${step.hook}: ${what}`
}

/** The steps of one run: the create-time hooks, or `postStartCommand`, in plan order. */
export const stepsFor = (plan: EnvironmentPlan, when: "create" | "start" | "update"): ReadonlyArray<LifecycleStep> =>
  plan.steps.filter((step) =>
    when === "create"
      ? CREATE_HOOKS.includes(step.hook)
      : when === "start"
        ? step.hook === "postStartCommand"
        : step.hook === "updateContentCommand"
  )

/**
 * Runs lifecycle steps in the container as the sandbox user, in the
 * workspace folder, with the user's probed environment and the plan's
 * remote env over it: a string through
 * `/bin/sh -c`, an array executed directly, an object's entries in parallel
 * (all must succeed). Each step's output goes to the progress log. The first
 * failed step ends the run but not the sandbox: its reason is returned (the
 * row's `setupError`); null when every step succeeded. A Docker failure is
 * not a step's failure and still fails.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const { emit, progress } = yield* Lifecycle

  return Effect.fn("SandboxService.runSteps")(function* (
    row: Sandbox,
    containerId: string,
    user: string,
    plan: EnvironmentPlan,
    steps: ReadonlyArray<LifecycleStep>,
    /** The user's probed environment (create/UserEnv.ts); `remoteEnv` wins over it. */
    probed: Readonly<Record<string, string>> = {},
    /** One of `steps` that ran already: its outcome is judged here, not run again. */
    ran?: RanStep
  ) {
    const exec = (command: SingleCommand) =>
      runtime.exec(containerId, argvOf(command), {
        user,
        cwd: plan.workspaceFolder,
        env: { ...probed, ...plan.remoteEnv },
        timeoutMs: STEP_TIMEOUT_MS,
        maxOutputBytes: STEP_OUTPUT_BYTES
      })
    const runOne = <E>(outcome: Effect.Effect<ExecOutcome, E>, marker: string, failure: string) =>
      Effect.gen(function* () {
        const result = yield* outcome
        for (const line of (result.stdout + result.stderr).split("\n").filter((l) => l.length > 0)) {
          yield* emit(row.id, row.status, `${marker} ${line}`).pipe(mapStoreErrors("sandbox.log"))
        }
        if (result.timedOut) return yield* new SetupFailed({ reason: `${failure} timed out` })
        if (result.exitCode !== 0) {
          return yield* new SetupFailed({ reason: `${failure} failed with exit code ${result.exitCode}` })
        }
      })
    const run = Effect.forEach(steps, (step, index) =>
      Effect.gen(function* () {
        const marker = `[${index + 1}/${steps.length}]`
        const failure = step.origin === "config.json" ? `setup ${marker}` : `setup ${marker} ${step.hook}`
        yield* progress(row, `${marker} ${describe(step)}`)
        if (ran?.step === step) return yield* runOne(Effect.succeed(ran.outcome), marker, failure)
        if (step.command._tag !== "Parallel") return yield* runOne(exec(step.command), marker, failure)
        yield* Effect.forEach(
          step.command.entries,
          (entry) => runOne(exec(entry.command), `${marker} ${entry.name}:`, `${failure} ${entry.name}`),
          { concurrency: "unbounded", discard: true }
        )
      })
    )
    return yield* run.pipe(
      Effect.as(null),
      Effect.catchTag("SetupFailed", ({ reason }) => Effect.as(progress(row, `${reason}; setup ended there`), reason))
    )
  })
})

export class LifecycleSteps extends Context.Service<LifecycleSteps, Effect.Success<typeof make>>()(
  "prbox/engine/LifecycleSteps"
) {
  static readonly layer = Layer.effect(LifecycleSteps, make)
}
