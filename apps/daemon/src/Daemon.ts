import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { statePaths } from "@prbox/domain"
import { Engines, LeftoverHelpers, PrebuildCleanup, Previews, WarmPool } from "@prbox/engine"
import { NodeEngine } from "@prbox/engine/node"
import { Clock, Context, Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { DaemonInfo } from "./DaemonInfo.ts"
import { startupFailure } from "./Files.ts"
import * as Front from "./Front.ts"
import { ApiHandlers, DAEMON_VERSION } from "./Handlers.ts"
import type { Limits } from "./Limits.ts"
import { acquireLock } from "./Lock.ts"
import { Maintenance } from "./Maintenance.ts"
import { servePreviews } from "./PreviewProxy.ts"
import { requestTimings } from "./RequestTimings.ts"
import { clearStaleSocket } from "./SocketFile.ts"
import { sshUpgrade } from "./SshUpgrade.ts"
import { restoreOptimization } from "./Tiering.ts"

export interface DaemonOptions {
  readonly home: string
  readonly limits: Limits
  /** Where the api bench reads the daemon's own time per request; unset, nothing is measured. */
  readonly timingsFile?: string
}

/**
 * prboxd: one per PRBOX_HOME. Takes the lock, replaces a stale socket, opens
 * the engine (migrating the database), reconciles, starts the gc timer, then
 * listens. Runs until interrupted (SIGTERM/SIGINT): then it stops accepting,
 * cuts open streams, interrupts the workers, closes the database and
 * releases the lock, in that order.
 */
export const run = (options: DaemonOptions) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { home, limits } = options
      const paths = statePaths(home)
      const socketPath = paths.socket
      yield* Effect.acquireRelease(Effect.try({ try: () => acquireLock(paths.lock), catch: startupFailure }), (lock) =>
        Effect.sync(lock.release)
      )
      yield* Effect.tryPromise({ try: () => clearStaleSocket(socketPath), catch: startupFailure })

      const engine = yield* Layer.build(NodeEngine.layer({ home })).pipe(Effect.mapError(startupFailure))
      const { chosen } = Context.get(engine, Engines)
      yield* Effect.logInfo(`sandboxes are made on the Docker engine ${chosen.address} (${chosen.source})`)
      const services = Context.merge(
        engine,
        yield* Layer.build(Maintenance.layer).pipe(Effect.provideContext(engine), Effect.mapError(startupFailure))
      )
      const context = Layer.succeedContext(services)

      // -------------------------------------------------------------------------
      // Startup reconcile: after the database is migrated (opening the store did
      // it), before the socket listens: every pass of the engine's Reconciler.
      // -------------------------------------------------------------------------
      const maintenance = Context.get(services, Maintenance)
      const reconciled = yield* Effect.result(maintenance.reconcile)
      if (reconciled._tag === "Success") {
        for (const pass of reconciled.success.passes) {
          for (const change of pass.changes) {
            yield* Effect.logInfo(`reconcile ${pass.pass}: ${change.sandboxId ?? change.containerId}: ${change.action}`)
          }
          for (const failure of pass.failures) {
            yield* Effect.logWarning(`reconcile ${pass.pass}: ${failure.sandboxId}: ${failure.detail}`)
          }
        }
        yield* Effect.logInfo("startup reconcile done")
      } else {
        // Docker down: nothing was changed; the daemon still serves (and says why on each call).
        yield* Effect.logWarning(`startup reconcile failed: ${reconciled.failure.message}`)
      }

      // Helper containers a killed daemon left (never started, or ended): removed, each said; never fatal.
      const helpers = yield* Effect.result(Context.get(services, LeftoverHelpers).remove)
      if (helpers._tag === "Success") {
        for (const id of helpers.success.removed)
          yield* Effect.logInfo(`reconcile helpers: removed ${id}, left by a killed daemon`)
        for (const { containerId, detail } of helpers.success.failures) {
          yield* Effect.logWarning(`reconcile helpers: could not remove ${containerId}: ${detail}`)
        }
      } else yield* Effect.logWarning(`helper reconcile failed: ${helpers.failure.message}`)

      // Prebuilds: a build a killed daemon left (its row, container, volume) is ended and removed.
      const prebuilds = Context.get(services, PrebuildCleanup)
      const prebuildsReconciled = yield* Effect.result(prebuilds.reconcile())
      if (prebuildsReconciled._tag === "Success") {
        for (const change of prebuildsReconciled.success.changes)
          yield* Effect.logInfo(`reconcile prebuilds: ${change}`)
        for (const failure of prebuildsReconciled.success.failures) {
          yield* Effect.logWarning(`reconcile prebuilds: ${failure}`)
        }
      } else yield* Effect.logWarning(`prebuild reconcile failed: ${prebuildsReconciled.failure.message}`)

      // The warm pool: what a killed daemon left half made, dead or without a row is removed.
      const pool = Context.get(services, WarmPool)
      const poolReconciled = yield* Effect.result(pool.reconcile())
      if (poolReconciled._tag === "Success") {
        for (const change of poolReconciled.success.changes) yield* Effect.logInfo(`reconcile warm pool: ${change}`)
        for (const failure of poolReconciled.success.failures)
          yield* Effect.logWarning(`reconcile warm pool: ${failure}`)
      } else yield* Effect.logWarning(`warm pool reconcile failed: ${poolReconciled.failure.message}`)

      yield* Effect.forkScoped(maintenance.gcTimer)
      yield* Effect.forkScoped(prebuilds.timer)
      yield* Effect.forkScoped(pool.timer)

      const counters = { requests: 0, streams: 0 }
      const startedAt = yield* Clock.currentTimeMillis
      const app = yield* HttpRouter.toHttpEffect(
        ApiHandlers.pipe(
          Layer.provide(NodeHttpServer.layerHttpServices),
          Layer.provide(context),
          Layer.provide(
            Layer.succeed(DaemonInfo, DaemonInfo.of({ home, startedAt, inFlight: () => ({ ...counters }) }))
          )
        )
      )
      const { timingsFile } = options
      const timings =
        timingsFile === undefined
          ? undefined
          : yield* Effect.acquireRelease(
              Effect.sync(() => requestTimings(timingsFile)),
              (timings) => Effect.sync(timings.close)
            )
      const upgrade = yield* sshUpgrade.pipe(Effect.provideContext(services))
      yield* Front.serve(app, {
        socketPath,
        limits,
        counters,
        upgrade,
        ...(timings === undefined ? {} : { timings })
      })
      yield* servePreviews(limits).pipe(Effect.provideContext(services))
      yield* Effect.logInfo(`prboxd ${DAEMON_VERSION} (pid ${process.pid}) listening on ${socketPath}`)
      // Start-up is over: requests are optimized as usual from here on.
      yield* Effect.sync(restoreOptimization)
      yield* Effect.logInfo(
        `previews on http://<port>.<sandbox id>.localhost:${Context.get(services, Previews).previewPort}/`
      )
      yield* Effect.addFinalizer(() => Effect.logInfo("prboxd stopping"))
      return yield* Effect.never
    })
  )
