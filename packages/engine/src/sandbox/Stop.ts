import type { Sandbox, SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, FileSystem, Layer } from "effect"
import { Config } from "../Config.ts"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { ExtraLabels, LABELS } from "../ContainerSpec.ts"
import { Workers } from "../create/Workers.ts"
import { Engines } from "../Engines.ts"
import { mapStoreErrors, type RuntimeError } from "../Errors.ts"
import { Installation } from "../Installation.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { Ownership, removeSandboxFolders } from "../workspace/Ownership.ts"
import { DestroyNotConfirmed } from "./Errors.ts"

/** Stop (stop wins over any create or restart step) and delete (container, workspace, home, row). */
const make = Effect.gen(function* () {
  const workers = yield* Workers
  const ownership = yield* Ownership
  const extraLabels = yield* ExtraLabels
  const repo = yield* SandboxRepo
  const engines = yield* Engines
  const config = yield* Config
  const fs = yield* FileSystem.FileSystem
  const lifecycle = yield* Lifecycle
  const install = (yield* Installation).id
  const { getRow, writeStatus } = lifecycle

  /**
   * Runs a Docker stop or removal under the container permit. One Docker
   * does not confirm leaves the row fenced (written before the error is
   * returned): the sandbox refuses restart, exec and reuse until a later
   * removal is confirmed.
   */
  const confirmed = (
    id: SandboxId,
    step: Effect.Effect<unknown, RuntimeError>,
    unconfirmed: { readonly to: "error" | "stopped"; readonly error: string }
  ) =>
    Effect.gen(function* () {
      const outcome = yield* Effect.result(lifecycle.withContainer(id, step))
      if (outcome._tag === "Success") return
      yield* lifecycle.serialized(writeStatus(id, unconfirmed.to, { error: unconfirmed.error, destroyFenced: true }))
      return yield* new DestroyNotConfirmed({ id, detail: outcome.failure.message })
    })

  /**
   * Which fence a row carries follows from its status. A stop Docker does
   * not confirm fences an `error` row (its container may still run); a
   * later confirmed stop lifts that fence. A removal is attempted only on a
   * `stopped` row (delete stops first), so a destroy's fence sits on a
   * `stopped` row, and a stop leaves a stopped row alone: only a confirmed
   * removal (the row is deleted) lifts it.
   */
  const stop = Effect.fn("SandboxService.stop")(
    function* (id: SandboxId) {
      // The intent is public before any permit is awaited: a worker holding
      // one sees it at its next check, and interrupting it waits for its
      // uninterruptible container step to record what it created.
      yield* lifecycle.requestStop(id)
      yield* lifecycle.interruptWorkers(id)
      const current = yield* getRow(id)
      if (current.status === "stopped") return current
      // A sandbox whose engine cannot be reached is refused before anything is written: it stays as it is.
      const runtime = yield* engines.runtimeFor(current.engine)
      const stopping = yield* lifecycle.serialized(writeStatus(id, "stopping"))
      const containerId = stopping.containerId
      if (containerId !== null) {
        // A broken config must not block a stop: the hook is skipped then.
        const cfg = yield* Effect.option(config.load)
        if (cfg._tag === "Some") yield* workers.runHook(stopping, "onSandboxDestroy", cfg.value)
        yield* confirmed(id, runtime.stop(containerId), { to: "error", error: "stop not confirmed by Docker" })
      }
      return yield* lifecycle.serialized(
        writeStatus(id, "stopped", { stoppedAt: yield* Clock.currentTimeMillis, destroyFenced: false })
      )
    },
    (effect, id) => Effect.ensuring(effect, lifecycle.clearStop(id)),
    mapStoreErrors("sandbox.stop")
  )

  /**
   * The sandbox's carried files left on its engine: the container's
   * removal takes them, but one whose removal was cut short after the
   * container went no longer names them.
   */
  const removeFiles = (runtime: ContainerRuntimeShape, id: SandboxId) =>
    Effect.flatMap(runtime.listFilesByLabel({ [LABELS.sandbox]: id, [LABELS.install]: install }), (left) =>
      Effect.forEach(left, (files) => runtime.removeFiles(files.name), { discard: true })
    )

  /**
   * Removes a stopped row's container, fence first: a daemon killed during
   * the removal, or a removal Docker does not answer, leaves a row that
   * refuses restart, exec and reuse. The fence stays on the returned row:
   * the caller lifts it (deleting the row, or forgetting its container).
   * The sandbox's carried files go with the container unless `keepFiles`
   * (its next container reuses them).
   */
  const removeContainer = Effect.fnUntraced(function* (id: SandboxId, keepFiles: boolean) {
    // Its engine is reached before the fence is written: an unreachable one leaves the row as it is.
    // A row without a container may still have files there: an open cut short after they were made.
    const before = yield* getRow(id)
    const touches = (row: Sandbox) => row.containerId !== null || !keepFiles
    const runtime = touches(before) ? yield* engines.runtimeFor(before.engine) : undefined
    const stopped = yield* lifecycle.serialized(
      writeStatus(id, "stopped", { destroyFenced: true, expectedFrom: ["stopped"] })
    )
    if (!touches(stopped)) return stopped
    const containerId = stopped.containerId
    const engine = runtime ?? (yield* engines.runtimeFor(stopped.engine))
    const removal = containerId === null ? Effect.void : engine.destroy(containerId, { keepFiles })
    yield* confirmed(id, keepFiles ? removal : Effect.andThen(removal, removeFiles(engine, id)), {
      to: "stopped",
      error: "container removal not confirmed by Docker"
    })
    return stopped
  })

  const delete_ = Effect.fn("SandboxService.delete")(function* (id: SandboxId) {
    yield* stop(id)
    // Only the row's deletion, after Docker confirmed, lifts the fence.
    const stopped = yield* removeContainer(id, false)
    // No container of it runs any more: its folders can go.
    yield* removeSandboxFolders(
      fs,
      ownership.foldersOf(id, stopped.workspacePath),
      engines.runtimeFor(stopped.engine),
      extraLabels
    )
    yield* lifecycle.serialized(repo.delete(id))
    yield* lifecycle.forgetContainer(id)
  }, mapStoreErrors("sandbox.delete"))

  /** Stops the sandbox and removes its container; the row keeps its workspace, home (carried files too) and port. */
  const dropContainer = Effect.fn("SandboxService.dropContainer")(function* (id: SandboxId) {
    yield* stop(id)
    yield* removeContainer(id, true)
    return yield* lifecycle.serialized(
      writeStatus(id, "stopped", { containerId: null, destroyFenced: false, expectedFrom: ["stopped"] })
    )
  }, mapStoreErrors("sandbox.dropContainer"))

  return { stop, delete: delete_, dropContainer }
})

/** Stop (stop wins over any create or restart step) and delete: a stop, then the container, folders and row removed. */
export class Stop extends Context.Service<Stop, Effect.Success<typeof make>>()("prbox/engine/Stop") {
  static readonly layer = Layer.effect(Stop, make)
}
