import type { EnvironmentPlan, Sandbox, SandboxId } from "@prbox/domain"
import { Context, Effect, Fiber, Layer } from "effect"
import { readyDetail } from "../CodeServerSpec.ts"
import type { PrboxConfig } from "../Config.ts"
import { imagePlan } from "../environment/PrepareEnvironment.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { SandboxTools } from "../SandboxTools.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { type ContainerEnvironment, CreateContainer } from "./CreateContainer.ts"
import { GitIdentity, IDENTITY_WARNING, identityArgv } from "./GitIdentity.ts"
import type { StartedEarly } from "./OpenCheckout.ts"
import { SandboxHooks } from "./SandboxHooks.ts"
import { SETUP_INTERRUPTED, Setup } from "./Setup.ts"

/** The image a sandbox made before environments were recorded ran: it brings its own code-server. */
const LEGACY_IMAGE = "codercom/code-server:latest"

/**
 * How a worker's started container becomes `running` (a create's, a
 * restart's, a claim's): its environment (`containerEnvironment`), then
 * the git identity and the setup up to `waitFor` beside code-server's
 * start, the ready hook and the `running` write (`becomeReady`), or, for a
 * claimed pool container that did the first of them when it was made,
 * only the last steps (`finishReady`).
 */
const make = Effect.gen(function* () {
  const ownership = yield* Ownership
  const container = yield* CreateContainer
  const setup = yield* Setup
  const tools = yield* SandboxTools
  const runHook = yield* SandboxHooks
  const gitIdentity = yield* GitIdentity
  const { advance, getRow, progress } = yield* Lifecycle

  /**
   * The plan a row's container is made from. A row from before environments
   * were recorded ran the configured image (or the old default), which
   * brings its own code-server.
   */
  const planOf = (row: Sandbox, config: PrboxConfig): EnvironmentPlan =>
    row.environmentPlan ?? { ...imagePlan(config, config.image ?? LEGACY_IMAGE), codeServer: "included" }

  const containerEnvironment = (row: Sandbox, config: PrboxConfig) =>
    Effect.gen(function* () {
      const plan = planOf(row, config)
      if (plan.codeServer === "included") return { plan, distribution: null } satisfies ContainerEnvironment
      const distribution = yield* tools.codeServer((line) => progress(row, line).pipe(Effect.ignore))
      return { plan, distribution } satisfies ContainerEnvironment
    })

  /** What `setup.start` gave: the steps up to `waitFor` done, the rest to run once the row says `running`. */
  type SetupOutcome = Effect.Success<ReturnType<typeof setup.start>>

  /**
   * A started container's last steps to `running`, once code-server answers
   * and the setup up to `waitFor` is done (`steps`): the ready hook, the
   * row's one write (with `recorded`, what else the row takes then; a
   * failed step's reason as its `setupError`, not fatal; a reused container
   * keeps its create-time outcome), and the steps past `waitFor`, which go
   * on once the row says `running`. `running`: what the worker lets go once
   * its row says so (the foreground).
   */
  const finishReady = (
    row: Sandbox,
    started: { readonly hostPort: number; readonly movedFrom: number | null },
    created: boolean,
    config: PrboxConfig,
    steps: SetupOutcome,
    running: Effect.Effect<void>,
    recorded: { readonly workspacePath?: string } = {}
  ) =>
    Effect.gen(function* () {
      yield* runHook(row, "onSandboxReady", config)
      const setupError = created || steps.failure !== null ? { setupError: steps.failure } : {}
      const detail = readyDetail(started.hostPort, started.movedFrom)
      yield* advance(row.id, "running", { detail, ...setupError, ...recorded })
      yield* running
      yield* setup.continueAfterReady(row.id, steps, detail)
    })

  /**
   * From a started container to `running`: while code-server starts, the
   * git identity on a new container, then the setup up to `waitFor`; once
   * both are done, `finishReady`. `startedEarly`: the container started
   * beside the checkout, and its environment; `alongside`: work on it run
   * beside code-server's start and the identity (a prebuilt workspace's
   * checkout), done before the steps.
   */
  const becomeReady = Effect.fn("SandboxService.becomeReady")(function* <E = never>(
    id: SandboxId,
    config: PrboxConfig,
    running: Effect.Effect<void>,
    startedEarly?: StartedEarly,
    alongside?: Effect.Effect<void, E>
  ) {
    const current = yield* getRow(id)
    // The workspace is the sandbox user's since its create (handOverCheckout): a
    // start never walks it, since a container may have swapped links into it.
    if (startedEarly === undefined) {
      const folders = ownership.foldersOf(id, current.workspacePath)
      yield* ownership.requireFolders(folders)
      // Its container mounts it: one gone missing would fail the start.
      yield* ownership.makeSockets(folders)
      if (folders.sealed === undefined) yield* ownership.makeFolders(folders)
    }
    const environment = startedEarly?.environment ?? (yield* containerEnvironment(current, config))
    const started = startedEarly?.started ?? (yield* container.start(id, config, environment))
    const { containerId, created } = started
    const row = yield* getRow(id)
    // The host's git identity, written while code-server starts and done before any step that may commit.
    // It is create-time work: from here the row says the setup did not finish until it has, so a stop
    // or crash now is not taken for a done setup.
    if (created) yield* advance(id, "starting", { setupError: SETUP_INTERRUPTED })
    const warn = (line: string) => progress(row, line).pipe(Effect.ignore)
    const { plan } = environment
    // Where the steps probe the user's environment, the identity is written first in the probe's exec:
    // one exec less beside code-server's start. The steps wait for both.
    const identityWritten = startedEarly?.identityWritten === true
    const joint = created && !identityWritten && setup.probeExecs(plan, created, config)
    const identity = yield* Effect.cached(startedEarly?.identity ?? gitIdentity.values(config))
    const write = Effect.flatMap(identity, (values) =>
      gitIdentity.write(containerId, plan, setup.userOf(plan), values, warn)
    )
    const identifying = yield* Effect.forkChild(created && !joint && !identityWritten ? write : Effect.void, {
      startImmediately: true
    })
    // A prebuilt workspace's checkout goes in that exec too, where its user is the probe's.
    const beside = startedEarly?.besideProbe
    const besideProbe = joint && beside?.user === setup.userOf(plan) ? beside : undefined
    const probe = joint
      ? Effect.flatMap(identity, (values) =>
          setup.probeFor(row, containerId, environment, created, config, undefined, {
            argv: identityArgv(plan, values),
            failed: warn(IDENTITY_WARNING),
            ...(besideProbe === undefined ? {} : { beside: besideProbe })
          })
        )
      : setup.probeFor(row, containerId, environment, created, config)
    // The checkout knows at once it makes its own exec, or, whatever the probe did, once it ended whether it ran there.
    if (beside !== undefined && besideProbe === undefined) yield* beside.declined
    const probed = besideProbe === undefined ? probe : Effect.ensuring(probe, besideProbe.declined)
    const probing = yield* Effect.forkChild(probed, { startImmediately: true })
    // The setup up to `waitFor` needs the files and the identity, not code-server: it runs beside its start.
    const preparing = Effect.gen(function* () {
      if (alongside !== undefined) yield* alongside
      yield* Fiber.join(identifying)
      // What `alongside` wrote is on the row now.
      const ready = alongside === undefined ? row : yield* getRow(id)
      const steps = yield* setup.start(ready, containerId, environment, created, config, Fiber.join(probing))
      return { ready, steps }
    })
    const [, { ready, steps }] = yield* Effect.all([container.waitHealthy(row, started, config), preparing], {
      concurrency: 2
    })
    yield* finishReady(ready, started, created, config, steps, running)
  })

  return { planOf, containerEnvironment, finishReady, becomeReady }
})

export class BecomeReady extends Context.Service<BecomeReady, Effect.Success<typeof make>>()(
  "prbox/engine/BecomeReady"
) {
  static readonly layer = Layer.effect(BecomeReady, make)
}
