import type { EnvironmentPlan, LifecycleCommand, LifecycleHook, SingleCommand } from "@prbox/domain"
import { Effect } from "effect"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { PrebuildFailed } from "./Errors.ts"

/** The create-time steps a prebuild runs before any user arrives, as the spec allows. */
export const PREBUILD_HOOKS: ReadonlyArray<LifecycleHook> = ["onCreateCommand", "updateContentCommand"]

/** The plan of a container that starts from a prebuild: `onCreateCommand` left out (it ran in the prebuild). */
export const afterPrebuild = (plan: EnvironmentPlan): EnvironmentPlan => ({
  ...plan,
  steps: plan.steps.filter((step) => step.hook !== "onCreateCommand")
})

/** One step's bound: a dependency install may be long, never unbounded. */
const STEP_TIMEOUT_MS = 30 * 60_000
/** The step's output is read only for its exit; kept small. */
const STEP_OUTPUT_BYTES = 64 * 1024

const argvOf = (command: SingleCommand): ReadonlyArray<string> =>
  command._tag === "Shell" ? ["/bin/sh", "-c", command.command] : command.argv

/** Where and as whom a prebuild's steps run: its container, as the sandbox user, in the workspace. */
export interface StepPlace {
  readonly containerId: string
  readonly user: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

/**
 * Runs the plan's `onCreateCommand` and `updateContentCommand` steps in
 * order (a Parallel command's entries together, all must succeed); the
 * first that fails ends the prebuild, named by its hook and exit code
 * (never its output: the base branch wrote it).
 */
export const runPrebuildSteps = (
  runtime: ContainerRuntimeShape,
  place: StepPlace,
  plan: EnvironmentPlan,
  hooks: ReadonlyArray<LifecycleHook> = PREBUILD_HOOKS,
  onProgress: (line: string) => Effect.Effect<void> = () => Effect.void,
  /** Before each step (MakePrebuild's low priority: the wait while an open runs). */
  before: Effect.Effect<void> = Effect.void
) =>
  Effect.forEach(
    plan.steps.filter((step) => hooks.includes(step.hook)),
    (step) =>
      Effect.gen(function* () {
        yield* before
        yield* onProgress(`prebuild: running ${step.hook} (${step.origin})`)
        const one = (command: SingleCommand, name?: string) =>
          Effect.gen(function* () {
            const what = name === undefined ? step.hook : `${step.hook} ${name}`
            const outcome = yield* runtime
              .exec(place.containerId, argvOf(command), {
                user: place.user,
                cwd: place.cwd,
                env: place.env,
                timeoutMs: STEP_TIMEOUT_MS,
                maxOutputBytes: STEP_OUTPUT_BYTES
              })
              .pipe(Effect.mapError((error) => new PrebuildFailed({ operation: what, detail: error.message })))
            if (outcome.timedOut || outcome.exitCode === null) {
              return yield* new PrebuildFailed({ operation: what, detail: "stopped at its time limit" })
            }
            if (outcome.exitCode !== 0) {
              return yield* new PrebuildFailed({ operation: what, detail: `exited with ${outcome.exitCode}` })
            }
          })
        const command: LifecycleCommand = step.command
        if (command._tag !== "Parallel") return yield* one(command)
        yield* Effect.forEach(command.entries, (entry) => one(entry.command, entry.name), {
          concurrency: "unbounded",
          discard: true
        })
      }),
    { discard: true }
  )
