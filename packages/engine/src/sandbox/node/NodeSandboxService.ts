import type { SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect, Layer } from "effect"
import { ContainerRuntime } from "../../ContainerRuntime.ts"
import { BecomeReady } from "../../create/BecomeReady.ts"
import { ChoosePort } from "../../create/ChoosePort.ts"
import { CreateContainer } from "../../create/CreateContainer.ts"
import { Dotfiles } from "../../create/Dotfiles.ts"
import { GitIdentity } from "../../create/GitIdentity.ts"
import { LifecycleSteps } from "../../create/LifecycleSteps.ts"
import { OpenCheckout } from "../../create/OpenCheckout.ts"
import { OpenFromPool } from "../../create/OpenFromPool.ts"
import { OpenFromPrebuild } from "../../create/OpenFromPrebuild.ts"
import { PrebuildNow } from "../../create/PrebuildNow.ts"
import { PrepareCreate } from "../../create/PrepareCreate.ts"
import { SandboxHooks } from "../../create/SandboxHooks.ts"
import { Setup } from "../../create/Setup.ts"
import { Supervise } from "../../create/Supervise.ts"
import { Workers } from "../../create/Workers.ts"
import { mapStoreErrors } from "../../Errors.ts"
import { InstallExtensions } from "../../environment/Extensions.ts"
import { PrepareEnvironment } from "../../environment/PrepareEnvironment.ts"
import { commandOptions, cwdRefusal } from "../../exec/CommandPlace.ts"
import { ExecTargets } from "../../exec/ExecTarget.ts"
import { InstallFeatures } from "../../features/InstallFeatures.ts"
import { Lifecycle } from "../../Lifecycle.ts"
import { Ownership } from "../../workspace/Ownership.ts"
import { Admission } from "../Admission.ts"
import { Push } from "../Push.ts"
import { Rebuild } from "../Rebuild.ts"
import { type ExecOptions, SandboxService } from "../SandboxService.ts"
import { Stop } from "../Stop.ts"
import { Update } from "../Update.ts"

const make = Effect.gen(function* () {
  const repo = yield* SandboxRepo
  const runtime = yield* ContainerRuntime
  const lifecycle = yield* Lifecycle
  const { open, restart } = yield* Admission
  const stopping = yield* Stop
  const update = yield* Update
  const push = yield* Push
  const rebuild = yield* Rebuild
  const execTarget = yield* ExecTargets
  const prebuild = yield* PrebuildNow
  const { getRow } = lifecycle

  /** A command in a running sandbox, as the user its setup ran as, in its workspace folder, with its remote env. */
  const exec = Effect.fn("SandboxService.exec")(function* (
    id: SandboxId,
    argv: ReadonlyArray<string>,
    options: ExecOptions
  ) {
    const target = yield* execTarget(id, "exec")
    const place = yield* commandOptions(target, options)
    const { within, ...rest } = place
    if (within === undefined)
      return yield* runtime.exec(target.containerId, argv, { ...rest, maxOutputBytes: options.maxOutputBytes })
    return yield* runtime
      .exec(target.containerId, argv, { ...rest, within, maxOutputBytes: options.maxOutputBytes })
      .pipe(Effect.catchTag("CwdRefused", (error) => Effect.fail(cwdRefusal(target, options.cwd)(error))))
  })

  return SandboxService.of({
    exec,
    open,
    get: (id) => getRow(id).pipe(mapStoreErrors("sandbox.get")),
    list: repo.findActive().pipe(mapStoreErrors("sandbox.list")),
    listAll: repo.findAll().pipe(mapStoreErrors("sandbox.listAll")),
    generation: repo.generation,
    stop: stopping.stop,
    restart,
    update,
    push,
    rebuild,
    prebuild,
    delete: stopping.delete,
    logs: (id, options) => repo.readLog(id, options).pipe(mapStoreErrors("sandbox.logs")),
    touch: (id) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => repo.touch(id, at)).pipe(mapStoreErrors("sandbox.touch")),
    events: lifecycle.events,
    awaitIdle: lifecycle.awaitIdle
  })
})

/** The services SandboxService is built from, each on the ports and the ones before it. */
const parts = (() => {
  const steps = Layer.mergeAll(
    Ownership.layer,
    ChoosePort.layer,
    Supervise.layer,
    ExecTargets.layer,
    SandboxHooks.layer,
    LifecycleSteps.layer,
    PrepareEnvironment.layer.pipe(Layer.provide(InstallFeatures.layer)),
    InstallExtensions.layer,
    PrepareCreate.layer
  )
  const container = CreateContainer.layer.pipe(Layer.provideMerge(steps))
  const workers = Workers.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(OpenCheckout.layer, OpenFromPrebuild.layer, OpenFromPool.layer, BecomeReady.layer).pipe(
        Layer.provideMerge(GitIdentity.layer)
      )
    ),
    Layer.provideMerge(Setup.layer.pipe(Layer.provide(Dotfiles.layer))),
    Layer.provideMerge(container)
  )
  const operations = Layer.mergeAll(Admission.layer, Stop.layer, Update.layer, Push.layer, PrebuildNow.layer).pipe(
    Layer.provideMerge(workers)
  )
  return Rebuild.layer.pipe(Layer.provideMerge(operations))
})()

/**
 * SandboxService from its parts: admission (Admission.ts), the workers
 * (create/Workers.ts: ownership, the container's create, start and health,
 * setup), stop and delete (Stop.ts), update and rebuild. What is left here
 * reads rows and runs exec. Containers carry ExtraLabels besides prbox's.
 */
export const layer = Layer.effect(SandboxService, make).pipe(Layer.provide(parts))
