import { restartRefusal, type Sandbox, SandboxConflict, type SandboxId } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { Context, Effect, Layer } from "effect"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels } from "../ContainerSpec.ts"
import { safeReason } from "../Errors.ts"
import type { BuildFiles } from "../environment/BuildContext.ts"
import { type EnvironmentChoice, readsWorkspace } from "../environment/ChooseEnvironment.ts"
import { PrepareEnvironment } from "../environment/PrepareEnvironment.ts"
import { Foreground } from "../Foreground.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { BecomeReady } from "./BecomeReady.ts"
import { stepsFor } from "./LifecycleSteps.ts"
import { OpenCheckout, type StartedEarly } from "./OpenCheckout.ts"
import { OpenFromPool } from "./OpenFromPool.ts"
import { OpenFromPrebuild } from "./OpenFromPrebuild.ts"
import { type PreparedCreate, poolOpen, sourceOf, targetOf } from "./PrepareCreate.ts"
import { SandboxHooks } from "./SandboxHooks.ts"
import { Setup } from "./Setup.ts"
import { Supervise } from "./Supervise.ts"

export interface RestartOptions {
  /**
   * The container was removed to be made again (`prbox rebuild`), from this
   * environment (read again from the workspace).
   */
  readonly rebuild?: EnvironmentChoice
}

/** What a claim took from the pool besides the row: the base its workspace holds, and where that is. */
type ClaimedPool = { readonly baseCommit: string; readonly workspacePath: string }

/** An open reads its workspace here, before any container of the sandbox ran. */
const HOST_FILES: BuildFiles = { _tag: "Host" }

/**
 * The workers that take a sandbox from admitted to `running`: a create
 * (clone, image, container, health, ready hook, setup) or a restart (container,
 * health, ready hook, and setup when its container had to be created again).
 * They run in the lifecycle's scope, past the request.
 */
const make = Effect.gen(function* () {
  const ownership = yield* Ownership
  const extraLabels = yield* ExtraLabels
  const runtime = yield* ContainerRuntime
  const workspaces = yield* Workspaces
  const lifecycle = yield* Lifecycle
  const configs = yield* Config
  const setup = yield* Setup
  const prepareEnvironment = yield* PrepareEnvironment
  const runHook = yield* SandboxHooks
  const { advance, progress } = lifecycle
  const supervise = yield* Supervise
  const foreground = yield* Foreground

  const checkout = yield* OpenCheckout
  const fromPrebuild = yield* OpenFromPrebuild
  const fromPool = yield* OpenFromPool
  const { planOf, containerEnvironment, finishReady, becomeReady } = yield* BecomeReady

  const createWorker = (row: Sandbox, config: PrboxConfig, prepared: PreparedCreate, running: Effect.Effect<void>) =>
    supervise(
      row,
      Effect.gen(function* () {
        const cloning = yield* advance(row.id, "cloning")
        const { ref, fetched, choice } = prepared
        const folders = ownership.foldersOf(row.id, null)
        const workspacePath = folders.workspace
        const branch = `pr-${ref.pullRequest}`
        const imageOnly = !readsWorkspace(choice)
        const prebuild = yield* fromPrebuild.choose(cloning, prepared.prebuild?.decision.open, imageOnly)
        if (prebuild !== undefined) {
          const recorded = yield* recordEnvironment(cloning, choice, folders.workspace, config)
          const environment = yield* containerEnvironment(recorded, config)
          const target = targetOf(prepared, workspacePath)
          const { early, checkout } = yield* fromPrebuild.start(recorded, config, environment, prebuild, target)
          // The row records the workspace once the PR's head is checked out there (a crash before is never restarted on the base's).
          const checkedOut = Effect.andThen(
            checkout,
            advance(row.id, "starting", { workspacePath, ...sourceOf(prepared) })
          )
          yield* becomeReady(row.id, config, running, early, checkedOut)
          yield* fromPool.refill(row, config, poolOpen(prepared))
          return yield* fromPrebuild.background(row, prepared.prebuild, prepared.fetched.mirrorPath)
        }
        yield* ownership.makeFolders(folders)
        // An environment built from the files gets them first; any other, only the clone's `.git`.
        const newOwner = imageOnly
          ? ownership.handedOver
            ? ownership.sandboxUser
            : undefined
          : yield* ownership.newWorkspaceOwner
        yield* workspaces.createWorkspace({
          mirrorPath: fetched.mirrorPath,
          commit: fetched.commit,
          destination: workspacePath,
          originUrl: ref.remoteUrl,
          branchName: branch,
          checkout: !imageOnly,
          ...(newOwner === undefined ? {} : { owner: newOwner }),
          onProgress: (line) => progress(cloning, line).pipe(Effect.ignore)
        })
        if (!imageOnly) yield* ownership.handOverCheckout(workspacePath, newOwner)
        let startedEarly: StartedEarly | undefined
        if (imageOnly) {
          const recorded = yield* recordEnvironment(cloning, choice, workspacePath, config)
          // An engine that is sent the files gets the whole checkout, made here (its containers never see it).
          if ((yield* runtime.filesAt) === "host") {
            const environment = yield* containerEnvironment(recorded, config)
            startedEarly = yield* checkout.startAndCheckOut(recorded, config, environment, {
              workspacePath,
              branch,
              commit: fetched.commit
            })
          } else yield* checkout.checkoutCloneHere({ workspacePath, branch, commit: fetched.commit })
        }
        const starting = yield* advance(row.id, "starting", { workspacePath, ...sourceOf(prepared) })
        if (!imageOnly) yield* recordEnvironment(starting, choice, workspacePath, config)
        yield* becomeReady(row.id, config, running, startedEarly)
        yield* fromPrebuild.background(row, prepared.prebuild, prepared.fetched.mirrorPath)
      })
    )

  /**
   * A claimed pool container (its row made `starting` by PoolRepo.claim,
   * with its source and its setup "did not finish") to `running`: the PR's
   * commits in, the setup up to `waitFor`, then `finishReady`, the row's one status write, which also
   * records its workspace (a claim killed before is never restarted on the
   * base's checkout). The rest the pool container did when it was made: its
   * folders, the git identity, code-server answering, the user's environment
   * probed (again here only when an earlier daemon made it).
   */
  const claimWorker = (
    row: Sandbox,
    config: PrboxConfig,
    prepared: PreparedCreate,
    claimed: ClaimedPool,
    running: Effect.Effect<void>
  ) =>
    supervise(
      row,
      Effect.gen(function* () {
        const { workspacePath, baseCommit } = claimed
        const target = targetOf(prepared, workspacePath)
        const brought = yield* fromPool.bringIn(row, yield* containerEnvironment(row, config), target, baseCommit)
        const { environment, started, probed } = brought
        const userEnv = setup.probeFor(row, started.containerId, environment, true, config, probed)
        const ready = { ...row, workspacePath }
        const steps = yield* setup.start(ready, started.containerId, environment, true, config, userEnv)
        yield* finishReady(ready, started, true, config, steps, running, { workspacePath })
        yield* fromPool.refill(row, config, poolOpen(prepared))
      })
    )

  /** The environment's image made present and its plan recorded on the row, before its container is made. */
  const recordEnvironment = (
    row: Sandbox,
    choice: EnvironmentChoice,
    workspacePath: string,
    config: PrboxConfig,
    readFrom: BuildFiles = HOST_FILES
  ) =>
    Effect.gen(function* () {
      const { plan, environment } = yield* prepareEnvironment(row, choice, workspacePath, config, readFrom, (line) =>
        progress(row, line).pipe(Effect.ignore)
      )
      return yield* advance(row.id, "starting", { environment, environmentPlan: plan })
    })

  /**
   * A restart; with `rebuild` (the row's container was removed for it), the
   * one that makes the new container, which then runs the create-time steps.
   */
  const restartWorker = (row: Sandbox, config: PrboxConfig, options: RestartOptions, running: Effect.Effect<void>) =>
    supervise(
      row,
      Effect.gen(function* () {
        if (options.rebuild !== undefined && row.workspacePath !== null) {
          yield* progress(row, "rebuilding: a new container on the kept workspace")
          // A container of it ran: the engine reads the workspace (the host's copy, on an engine that is sent it).
          const readFrom: BuildFiles =
            (yield* runtime.filesAt) === "host" ? { _tag: "Engine", labels: extraLabels } : HOST_FILES
          yield* recordEnvironment(row, options.rebuild, row.workspacePath, config, readFrom)
        }
        yield* becomeReady(row.id, config, running)
      })
    )

  /**
   * An open's worker holds the foreground from its admission until its row
   * says `running` (or it ends): background makers wait meanwhile (Foreground.ts).
   */
  const inForeground = (id: SandboxId, worker: (running: Effect.Effect<void>) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      const release = yield* foreground.hold
      yield* lifecycle.spawnWorker(id, worker(release), release)
    })

  /** Moves a restartable row to `starting` and hands it to a worker (the caller holds admission). */
  const admitRestart = Effect.fn("SandboxService.admitRestart")(function* (
    row: Sandbox,
    config: PrboxConfig,
    options: RestartOptions = {}
  ) {
    const refusal = restartRefusal(row)
    if (refusal !== undefined) return yield* new SandboxConflict({ id: row.id, reason: refusal })
    const starting = yield* lifecycle.serialized(
      lifecycle.writeStatus(row.id, "starting", { error: null, stoppedAt: null })
    )
    yield* inForeground(row.id, (running) => restartWorker(starting, config, options, running))
    return starting
  })

  /** Hands a freshly inserted row to its create worker (the caller holds admission). */
  const spawnCreate = (row: Sandbox, config: PrboxConfig, prepared: PreparedCreate) =>
    inForeground(row.id, (running) => createWorker(row, config, prepared, running))

  /** `updateContentCommand` after `prbox update` moved the workspace: its failure is reported, not fatal. */
  const runUpdateContent = (row: Sandbox, containerId: string) =>
    Effect.gen(function* () {
      const config = yield* configs.load
      const plan = row.environmentPlan ?? planOf(row, config)
      return yield* setup.runAlone(row, containerId, plan, stepsFor(plan, "update"), config.userEnvProbeTimeoutSeconds)
    }).pipe(Effect.catch((error) => Effect.succeed(safeReason(error))))

  /** Hands a row made of a claimed pool container to its worker (the caller holds admission). */
  const spawnClaim = (row: Sandbox, config: PrboxConfig, prepared: PreparedCreate, claimed: ClaimedPool) =>
    inForeground(row.id, (running) => claimWorker(row, config, prepared, claimed, running))

  const poolKeyFor = (cfg: PrboxConfig, prepared: PreparedCreate) => fromPool.keyFor(cfg, poolOpen(prepared))

  return { admitRestart, spawnCreate, spawnClaim, poolKeyFor, runHook, runUpdateContent }
})

export class Workers extends Context.Service<Workers, Effect.Success<typeof make>>()("prbox/engine/Workers") {
  static readonly layer = Layer.effect(Workers, make)
}
