import type { EnvironmentPlan, LifecycleStep, Sandbox, SandboxId } from "@prbox/domain"
import { Context, Effect, Layer, Option } from "effect"
import { codeServerCommand, containerUser, homeEnvFor } from "../CodeServerSpec.ts"
import { dotfilesOf, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime, type ExecOutcome } from "../ContainerRuntime.ts"
import { type SandboxUser, userSpec } from "../ContainerSpec.ts"
import type { RuntimeError } from "../Errors.ts"
import { InstallExtensions, type InstallExtensionsInput } from "../environment/Extensions.ts"
import { Lifecycle } from "../Lifecycle.ts"
import type { CodeServerDistribution } from "../SandboxTools.ts"
import { Ownership } from "../workspace/Ownership.ts"
import type { ContainerEnvironment } from "./CreateContainer.ts"
import { Dotfiles } from "./Dotfiles.ts"
import { LifecycleSteps, type RanStep, stepAfter, stepsFor } from "./LifecycleSteps.ts"
import type { BesideCommand } from "./ProbeBeside.ts"
import { beforeReady, probeDue, stepInProbe, stepsBeforeReady } from "./StepOrder.ts"
import { type ProbedEnv, probeUserEnvAfter } from "./UserEnv.ts"

/** A setup's outcome until it ends: what a reused container shows when it never did. */
export const SETUP_INTERRUPTED = "setup did not finish (interrupted)"

/** Who a sandbox's commands run as: the workspace owner (root only for a trusted repository that asked). */
export const setupUser = (plan: EnvironmentPlan, sandboxUser: SandboxUser): string =>
  containerUser(plan, userSpec(sandboxUser))

/** What installs `plan`'s extensions in a started container as `user`, where its code-server looks. */
export const extensionsInput = (
  containerId: string,
  distribution: CodeServerDistribution | null,
  plan: EnvironmentPlan,
  user: string,
  progress: (line: string) => Effect.Effect<void>
): InstallExtensionsInput => ({
  containerId,
  codeServer: codeServerCommand(distribution),
  user,
  cwd: plan.workspaceFolder,
  env: { ...plan.remoteEnv, ...homeEnvFor(plan) },
  ids: plan.extensions,
  progress
})

/** The user's environment for a start's steps, and the first of them when it ran in the probe's exec. */
export interface StepsEnv {
  readonly env: Readonly<Record<string, string>>
  readonly ran?: RanStep
}

/**
 * A command run first in the probe's exec (its argv), and what to do when
 * it failed; `beside`: one run beside the shell in that exec (when its
 * command can be made), its outcome handed to `ran`.
 */
export interface BeforeProbe {
  readonly argv: ReadonlyArray<string>
  readonly failed: Effect.Effect<void>
  readonly beside?: {
    readonly command: Effect.Effect<BesideCommand, unknown>
    readonly ran: (outcome: ExecOutcome) => Effect.Effect<void>
  }
}

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
  const installDotfiles = yield* Dotfiles
  const lifecycle = yield* Lifecycle
  const { progress } = lifecycle

  const userOf = (plan: EnvironmentPlan) => setupUser(plan, ownership.sandboxUser)

  /** A probe's environment for this start's steps; one that gives none is a warning in the sandbox's log. */
  const envOf = (row: Sandbox, found: ProbedEnv) =>
    found._tag === "Probed"
      ? Effect.succeed(found.env)
      : Effect.as(
          found.warning === null ? Effect.void : progress(row, `warning: ${found.warning}`).pipe(Effect.ignore),
          {}
        )

  /**
   * The probed environment for this start's steps, `before` run first in
   * its exec; `step` after the command beside it there, when it can be.
   */
  const probed = (
    row: Sandbox,
    containerId: string,
    plan: EnvironmentPlan,
    timeoutSeconds: number,
    before?: BeforeProbe,
    step?: LifecycleStep
  ) =>
    Effect.gen(function* () {
      const besideCommand =
        before?.beside === undefined ? undefined : Option.getOrUndefined(yield* Effect.option(before.beside.command))
      const then = step === undefined ? undefined : stepAfter(step, plan)
      const probe = probeUserEnvAfter(
        runtime,
        containerId,
        userOf(plan),
        plan,
        timeoutSeconds,
        before?.argv,
        besideCommand === undefined || then === undefined ? besideCommand : { ...besideCommand, then }
      )
      const { found, first, beside, step: stepRan } = yield* probe
      if (beside !== undefined && before?.beside !== undefined) yield* before.beside.ran(beside)
      if (before !== undefined && first !== "ran") yield* before.failed
      const env = yield* envOf(row, found)
      return (
        step === undefined || stepRan === undefined ? { env } : { env, ran: { step, outcome: stepRan } }
      ) satisfies StepsEnv
    })

  /**
   * Whether probeFor, given no kept probe, makes an exec (a step is due and
   * the plan probes): one that its `before` can join.
   */
  const probeExecs = (plan: EnvironmentPlan, created: boolean, config: PrboxConfig) =>
    probeDue(plan, created, config) && plan.userEnvProbe !== undefined

  /**
   * The user's environment for this start's steps, or none when no step is
   * due. Its own effect so the caller can fork it as soon as the container
   * runs, beside the health wait (both are waited for before any step; the
   * probe is an exec of the user's shell, independent of code-server).
   * `kept`: the container's probe made already (a pool container's, when
   * it was made): used, not made again. `before`: run first in the probe's
   * exec (where probeExecs says there is one).
   */
  const probeFor = (
    row: Sandbox,
    containerId: string,
    environment: ContainerEnvironment,
    created: boolean,
    config: PrboxConfig,
    kept?: ProbedEnv,
    before?: BeforeProbe
  ): Effect.Effect<StepsEnv, RuntimeError> => {
    const { plan } = environment
    if (!probeDue(plan, created, config)) return Effect.succeed({ env: {} })
    if (kept !== undefined) return Effect.map(envOf(row, kept), (env) => ({ env }))
    const step = before?.beside === undefined ? undefined : stepInProbe(plan, created)
    return probed(row, containerId, plan, config.userEnvProbeTimeoutSeconds, before, step)
  }

  /** `steps` in order; null when all succeeded, else the reason the first failed. */
  const run = (
    row: Sandbox,
    containerId: string,
    plan: EnvironmentPlan,
    steps: ReadonlyArray<LifecycleStep>,
    env: Readonly<Record<string, string>>,
    ran?: RanStep
  ) => (steps.length === 0 ? Effect.succeed(null) : runSteps(row, containerId, userOf(plan), plan, steps, env, ran))

  /**
   * `steps` with the user's dotfiles (when `dotfiles` gives the config)
   * where the devcontainers CLI installs them (`runLifecycleHooks`,
   * src/spec-common/injectHeadless.ts): after the create-time steps, before
   * `postStartCommand`. A failure ends the run, as a step's does.
   */
  const runWithDotfiles = (
    row: Sandbox,
    containerId: string,
    plan: EnvironmentPlan,
    steps: ReadonlyArray<LifecycleStep>,
    env: Readonly<Record<string, string>>,
    dotfiles: PrboxConfig | undefined,
    ran?: RanStep
  ) => {
    if (dotfiles === undefined) return run(row, containerId, plan, steps, env, ran)
    const starts = steps.findIndex((step) => step.hook === "postStartCommand")
    const split = starts === -1 ? steps.length : starts
    return Effect.gen(function* () {
      const before = yield* run(row, containerId, plan, steps.slice(0, split), env, ran)
      if (before !== null) return before
      const failed = yield* installDotfiles(row, containerId, userOf(plan), plan, dotfiles, env)
      if (failed !== null) return failed
      return yield* run(row, containerId, plan, steps.slice(split), env)
    })
  }

  const start = Effect.fn("SandboxService.setup")(function* <E>(
    row: Sandbox,
    containerId: string,
    environment: ContainerEnvironment,
    created: boolean,
    config: PrboxConfig,
    /** probeFor's answer (a forked probe's join). */
    userEnv: Effect.Effect<StepsEnv, E>
  ) {
    const { plan, distribution } = environment
    const creates = created ? stepsFor(plan, "create") : []
    const starts = stepsFor(plan, "start")
    // The dotfiles are create-time work: once per container, in postCreateCommand's part of the setup.
    const dotfiles = created && dotfilesOf(config) !== undefined ? config : undefined
    const dotfilesNow = beforeReady(plan, "postCreateCommand")
    /**
     * `failure`: a step's before readiness (the setup ended there), or null;
     * `rest`: the steps past `waitFor`, to run once the row says `running`;
     * `restCreates`: whether they hold create-time steps.
     */
    const nothing = { failure: null as string | null, rest: undefined, restCreates: false }
    const idle = creates.length === 0 && starts.length === 0 && dotfiles === undefined
    if (idle && (!created || plan.extensions.length === 0)) return nothing
    // A new container's row already says "did not finish" (Workers marks it before the git identity),
    // until the create-time work ends: one cut short is not mistaken for a done one when it is reused.
    if (created && plan.extensions.length > 0) {
      yield* installExtensions(
        extensionsInput(containerId, distribution, plan, userOf(plan), (line) =>
          progress(row, line).pipe(Effect.ignore)
        )
      )
    }
    const { env, ran } = yield* userEnv
    const now = stepsBeforeReady(plan, created)
    const later = [...creates, ...starts].filter((step) => !beforeReady(plan, step.hook))
    // A failed create-time step ends the setup: postStartCommand runs only after a complete one.
    const failure = yield* runWithDotfiles(row, containerId, plan, now, env, dotfilesNow ? dotfiles : undefined, ran)
    const dotfilesLater = dotfilesNow ? undefined : dotfiles
    if (failure !== null || (later.length === 0 && dotfilesLater === undefined)) return { ...nothing, failure }
    return {
      failure: null,
      rest: Effect.flatMap(lifecycle.getRow(row.id), (ready) =>
        runWithDotfiles(ready, containerId, plan, later, env, dotfilesLater)
      ),
      restCreates: dotfilesLater !== undefined || later.some((step) => step.hook !== "postStartCommand")
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
      : Effect.flatMap(probed(row, containerId, plan, probeTimeoutSeconds), ({ env }) =>
          run(row, containerId, plan, steps, env)
        )

  return { probeFor, probeExecs, start, continueAfterReady, runAlone, userOf }
})

export class Setup extends Context.Service<Setup, Effect.Success<typeof make>>()("prbox/engine/Setup") {
  static readonly layer = Layer.effect(Setup, make)
}
