import type { Sandbox } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { Clock, Context, Effect, Layer } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { userSpec } from "../ContainerSpec.ts"
import { Engines } from "../Engines.ts"
import { type EnvironmentChoice, readsWorkspace } from "../environment/ChooseEnvironment.ts"
import { outcomeLine } from "../environment/Extensions.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import type { OpenPath } from "../prebuild/PrebuildDecision.ts"
import { afterPrebuild } from "../prebuild/PrebuildSteps.ts"
import { checkoutPrebuiltInContainer, prebuiltBundle } from "../workspace/ContainerWorkspaceGit.ts"
import { Ownership } from "../workspace/Ownership.ts"
import type { ContainerEnvironment } from "./CreateContainer.ts"
import type { StartedEarly } from "./OpenCheckout.ts"
import type { PrebuiltTarget } from "./OpenFromPrebuild.ts"
import { PoolContainer } from "./PoolContainer.ts"
import { poolKeyFor, WarmPool } from "./WarmPool.ts"

/** What of an open decides whether it claims: its prebuild path and its environment. */
export interface PoolOpen {
  readonly open: OpenPath | undefined
  readonly choice: EnvironmentChoice
}

/**
 * A sandbox made of a claimed pool container: its container runs already
 * (code-server up on the base's checkout), so the PR's commits are brought
 * in as a bundle and checked out by the container's git as the sandbox
 * user, and the create-time steps but `onCreateCommand` (it ran in the
 * prebuild) are left to the setup, with the user's environment the pool
 * container probed and the extensions it installed when it was made. `refill`: the pool of an open's key
 * topped up in the background once its row records its environment.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const workspaces = yield* Workspaces
  const ownership = yield* Ownership
  const engines = yield* Engines
  const warmPool = yield* WarmPool
  const containers = yield* PoolContainer
  const { progress, getRow, failIfStopRequested } = yield* Lifecycle

  /** The key an open claims by, if it may (config, its path, an image-only environment on the local engine). */
  const keyFor = (cfg: PrboxConfig, { open, choice }: PoolOpen) =>
    poolKeyFor(cfg, open, {
      imageOnly: !readsWorkspace(choice),
      localEngine: engines.current === null
    })

  const bringIn = (claimed: Sandbox, environment: ContainerEnvironment, target: PrebuiltTarget, baseCommit: string) =>
    Effect.gen(function* () {
      const { containerId, hostPort } = claimed
      if (containerId === null || hostPort === null)
        return yield* Effect.die(new Error("a claimed row has no container"))
      yield* failIfStopRequested(claimed.id)
      const since = new Date(yield* Clock.currentTimeMillis)
      const done = yield* containers.doneFor(claimed.id)
      // Extensions its pool container installed are not installed again; their outcome is the sandbox's to see.
      const plan = { ...afterPrebuild(environment.plan), ...(done.extensions === undefined ? {} : { extensions: [] }) }
      for (const outcome of done.extensions ?? [])
        yield* progress(claimed, `${outcomeLine(outcome)} (when its pool container was made)`).pipe(Effect.ignore)
      yield* progress(claimed, `from the warm pool: bringing ${target.commit.slice(0, 7)} in as ${target.branch}`).pipe(
        Effect.ignore
      )
      const exec: ExecTarget = {
        id: claimed.id,
        containerId,
        user: userSpec(ownership.sandboxUser),
        workspaceFolder: plan.workspaceFolder,
        env: {},
        sourceCommit: target.commit
      }
      yield* checkoutPrebuiltInContainer(runtime, exec, target, yield* prebuiltBundle(workspaces, target, baseCommit))
      const started = { containerId, hostPort, since, movedFrom: null, created: true, checkoutInContainer: true }
      const early: StartedEarly = { environment: { ...environment, plan }, started }
      return { ...early, probed: done.probed }
    })

  /** Tops up the pool of the open's key (its prebuild, the environment its row recorded), in the background. */
  const refill = (row: Sandbox, cfg: PrboxConfig, opened: PoolOpen) =>
    Effect.gen(function* () {
      const { open } = opened
      if (keyFor(cfg, opened) === undefined || open?._tag !== "Prebuild" || open.prebuild.volume === null) return
      const { environment, environmentPlan } = yield* getRow(row.id)
      if (environment === null || environmentPlan === null) return
      const prebuild = { ...open.prebuild, volume: open.prebuild.volume }
      yield* warmPool.fill({ prebuild, environment, plan: environmentPlan }, cfg)
    }).pipe(Effect.ignore)

  return { keyFor, bringIn, refill }
})

export class OpenFromPool extends Context.Service<OpenFromPool, Effect.Success<typeof make>>()(
  "prbox/engine/OpenFromPool"
) {
  static readonly layer = Layer.effect(OpenFromPool, make)
}
