import type { EnvironmentPlan, LifecycleHook, LifecycleStep, Sandbox, SandboxId, WaitFor } from "@prbox/domain"
import { Context, Effect, Layer } from "effect"
import { codeServerCommand, containerUser, homeEnvFor } from "../CodeServerSpec.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { userSpec } from "../ContainerSpec.ts"
import { InstallExtensions } from "../environment/Extensions.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { Ownership } from "../workspace/Ownership.ts"
import type { ContainerEnvironment } from "./CreateContainer.ts"
import { LifecycleSteps, stepsFor } from "./LifecycleSteps.ts"
import { probeUserEnv } from "./UserEnv.ts"

/** A setup's outcome until it ends: what a reused container shows when it never did. */
export const SETUP_INTERRUPTED = "setup did not finish (interrupted)"

/** The hooks in run order; `waitFor` names the last one the sandbox waits for. */
const ORDER: ReadonlyArray<WaitFor> = [
  "initializeCommand",
  "onCreateCommand",
  "updateContentCommand",
  "postCreateCommand",
  "postStartCommand"
]

/**
 * Whether `hook` runs before the sandbox is ready: at or before the plan's
 * `waitFor` (the CLI's `runLifecycleHooks`, src/spec-common/injectHeadless.ts,
 * returns after it and leaves the rest running); every hook when the plan
 * names none (a configured or default image, a row from before waitFor).
 */
export const beforeReady = (plan: EnvironmentPlan, hook: LifecycleHook): boolean =>
  plan.waitFor === undefined || ORDER.indexOf(hook) <= ORDER.indexOf(plan.waitFor)

/**
 * A started sandbox's setup: the extensions and create-time steps on a
 * container this start made, `postStartCommand` on every start (only after
 * a complete create-time setup), the user's environment probed once for
 * them (`userEnvProbe`, while code-server starts), and the steps past
 * `waitFor` left for after the sandbox is ready.
 */
const make = Effect.gen(function* () {
  const ownership = yield* Ownership
  const runtime = yield* ContainerRuntime
  const runSteps = yield* LifecycleSteps
  const installExtensions = yield* InstallExtensions
  const lifecycle = yield* Lifecycle
  const { progress } = lifecycle

  /** Who the sandbox's commands run as: the workspace owner (root only for a trusted repository that asked). */
  const userOf = (plan: EnvironmentPlan) => containerUser(plan, userSpec(ownership.sandboxUser))

  /** The probed environment for this start's steps; a probe that gives none is a warning. */
  const probed = (row: Sandbox, containerId: string, plan: EnvironmentPlan, timeoutSeconds: number) =>
    Effect.gen(function* () {
      const found = yield* probeUserEnv(runtime, containerId, userOf(plan), plan, timeoutSeconds)
      if (found._tag === "Probed") return found.env
      if (found.warning !== null) yield* progress(row, `warning: ${found.warning}`).pipe(Effect.ignore)
      return {}
    })

  /**
   * The user's environment for this start's steps, or none when no step is
   * due. Its own effect so the caller can fork it as soon as the container
   * runs, beside the health wait (both are waited for before any step; the
   * probe is an exec of the user's shell, independent of code-server).
   */
  const probeFor = (
    row: Sandbox,
    containerId: string,
    environment: ContainerEnvironment,
    created: boolean,
    timeoutSeconds: number
  ) => {
    const { plan } = environment
    const due = (created ? stepsFor(plan, "create").length : 0) + stepsFor(plan, "start").length
    return due === 0
      ? Effect.succeed<Readonly<Record<string, string>>>({})
      : probed(row, containerId, plan, timeoutSeconds)
  }

  /** `steps` in order; null when all succeeded, else the reason the first failed. */
  const run = (
    row: Sandbox,
    containerId: string,
    plan: EnvironmentPlan,
    steps: ReadonlyArray<LifecycleStep>,
    env: Readonly<Record<string, string>>
  ) => (steps.length === 0 ? Effect.succeed(null) : runSteps(row, containerId, userOf(plan), plan, steps, env))

  const start = Effect.fn("SandboxService.setup")(function* <E>(
    row: Sandbox,
    containerId: string,
    environment: ContainerEnvironment,
    created: boolean,
    /** probeFor's answer (a forked probe's join). */
    userEnv: Effect.Effect<Readonly<Record<string, string>>, E>
  ) {
    const { plan, distribution } = environment
    const creates = created ? stepsFor(plan, "create") : []
    const starts = stepsFor(plan, "start")
    /**
     * `failure`: a step's before readiness (the setup ended there), or null;
     * `rest`: the steps past `waitFor`, to run once the row says `running`;
     * `restCreates`: whether they hold create-time steps.
     */
    const nothing = { failure: null as string | null, rest: undefined, restCreates: false }
    if (creates.length === 0 && starts.length === 0 && (!created || plan.extensions.length === 0)) return nothing
    // A new container's row already says "did not finish" (Workers marks it before the git identity),
    // until the create-time work ends: one cut short is not mistaken for a done one when it is reused.
    if (created && plan.extensions.length > 0) {
      yield* installExtensions({
        containerId,
        codeServer: codeServerCommand(distribution),
        user: userOf(plan),
        cwd: plan.workspaceFolder,
        env: { ...plan.remoteEnv, ...homeEnvFor(plan) },
        ids: plan.extensions,
        progress: (line) => progress(row, line).pipe(Effect.ignore)
      })
    }
    const env = yield* userEnv
    const [now, later] = [
      [...creates, ...starts].filter((step) => beforeReady(plan, step.hook)),
      [...creates, ...starts].filter((step) => !beforeReady(plan, step.hook))
    ]
    // A failed create-time step ends the setup: postStartCommand runs only after a complete one.
    const failure = yield* run(row, containerId, plan, now, env)
    if (failure !== null || later.length === 0) return { ...nothing, failure }
    return {
      failure: null,
      rest: Effect.flatMap(lifecycle.getRow(row.id), (ready) => run(ready, containerId, plan, later, env)),
      restCreates: later.some((step) => step.hook !== "postStartCommand")
    }
  })

  /**
   * The steps past `waitFor`, on a sandbox already `running`: their progress
   * goes to its log, their outcome to its `setupError` (with the ready
   * detail back), unless a stop was requested meanwhile. Cut short (a stop
   * interrupts the worker), create-time steps leave the setup "did not
   * finish" on the row, which is still `running` then.
   */
  const continueAfterReady = (id: SandboxId, setup: Effect.Success<ReturnType<typeof start>>, detail: string) => {
    const { rest, restCreates } = setup
    if (rest === undefined) return Effect.void
    const write = (fields: { readonly detail?: string; readonly setupError?: string | null }) =>
      lifecycle.writeStatus(id, "running", { ...fields, expectedFrom: ["running"] })
    return rest.pipe(
      Effect.flatMap((failure) =>
        lifecycle.serialized(
          Effect.andThen(
            lifecycle.failIfStopRequested(id),
            write({ detail, ...(failure !== null || restCreates ? { setupError: failure } : {}) })
          )
        )
      ),
      // The stop that interrupts waits for this: the row is still `running`.
      Effect.onInterrupt(() =>
        restCreates ? Effect.ignore(lifecycle.serialized(write({ setupError: SETUP_INTERRUPTED }))) : Effect.void
      )
    )
  }

  /** Steps run on their own (`prbox update`'s updateContentCommand), with the user's environment probed first. */
  const runAlone = (
    row: Sandbox,
    containerId: string,
    plan: EnvironmentPlan,
    steps: ReadonlyArray<LifecycleStep>,
    probeTimeoutSeconds: number
  ) =>
    steps.length === 0
      ? Effect.succeed(null)
      : Effect.flatMap(probed(row, containerId, plan, probeTimeoutSeconds), (env) =>
          run(row, containerId, plan, steps, env)
        )

  return { probeFor, start, continueAfterReady, runAlone, userOf }
})

export class Setup extends Context.Service<Setup, Effect.Success<typeof make>>()("prbox/engine/Setup") {
  static readonly layer = Layer.effect(Setup, make)
}
