/** Which of a plan's lifecycle steps a start runs, and when: before the sandbox is ready, in the probe's exec. */
import type { EnvironmentPlan, LifecycleHook, LifecycleStep, WaitFor } from "@prbox/domain"
import { dotfilesOf, type PrboxConfig } from "../Config.ts"
import { stepsFor } from "./LifecycleSteps.ts"

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

/** The steps a start runs before the sandbox is ready, in order (create-time ones only on a container it made). */
export const stepsBeforeReady = (plan: EnvironmentPlan, created: boolean): ReadonlyArray<LifecycleStep> =>
  [...(created ? stepsFor(plan, "create") : []), ...stepsFor(plan, "start")].filter((step) =>
    beforeReady(plan, step.hook)
  )

/**
 * The step a new container's probe exec runs after the command beside it
 * (one exec less beside code-server's start): the first before readiness,
 * a create-time one of one command, where no extension is installed first.
 */
export const stepInProbe = (plan: EnvironmentPlan, created: boolean): LifecycleStep | undefined => {
  const [step] = created && plan.extensions.length === 0 ? stepsBeforeReady(plan, created) : []
  return step === undefined || step.hook === "postStartCommand" ? undefined : step
}

/**
 * Whether a start's steps need the user's environment: some are due (the
 * create-time ones and the dotfiles on a container this start made,
 * `postStartCommand` on every start).
 */
export const probeDue = (plan: EnvironmentPlan, created: boolean, config: PrboxConfig): boolean => {
  const createWork = stepsFor(plan, "create").length + (dotfilesOf(config) === undefined ? 0 : 1)
  return (created ? createWork : 0) + stepsFor(plan, "start").length > 0
}
