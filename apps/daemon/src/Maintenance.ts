import { type GcPlan, SandboxId } from "@prbox/domain"
import { Gc, Reconciler } from "@prbox/engine"
import {
  type ApiError,
  BadRequest,
  type GcReport,
  type GcRequest,
  type PrunePlan,
  type PruneReport,
  type PruneRequest,
  type ReconcileReport
} from "@prbox/protocol"
import { Context, Effect, Layer } from "effect"
import { api } from "./Mapping.ts"

/**
 * Reconcile, gc and prune as the daemon offers them: the startup pass, the
 * gc timer and the `/v1/reconcile`, `/v1/gc`, `/v1/prune` endpoints all go
 * through this one service.
 */
export interface MaintenanceShape {
  /** Every reconcile pass over every row and labelled container. */
  readonly reconcile: Effect.Effect<ReconcileReport, ApiError>
  /** Plans (`execute: false`), or acts on the intersection of `shown` and a fresh plan. */
  readonly gc: (request: GcRequest) => Effect.Effect<GcReport, ApiError>
  /** Orphaned containers, volumes and directories of this PRBOX_HOME: listed, or removed (revalidated like gc). */
  readonly prune: (request: PruneRequest) => Effect.Effect<PruneReport, ApiError>
  /** The gc timer: runs gc every `gcIntervalMinutes` (read afresh each time), logging failures. */
  readonly gcTimer: Effect.Effect<never>
}

const requireShown = <A>(shown: A | undefined, operation: string) =>
  shown === undefined
    ? Effect.fail(
        new BadRequest({
          message: `${operation} with execute needs the plan that was shown (shown); ask for a dry run first`
        })
      )
    : Effect.succeed(shown)

/** Splits what a partly failed prune removed (ids and paths, all from `shown`) back into the plan's kinds. */
const removedOf = (shown: PrunePlan, removed: ReadonlyArray<string>): PrunePlan => ({
  containers: shown.containers.filter((id) => removed.includes(id)),
  volumes: shown.volumes.filter((name) => removed.includes(name)),
  directories: shown.directories.filter((path) => removed.includes(path))
})

export class Maintenance extends Context.Service<Maintenance, MaintenanceShape>()("prbox/daemon/Maintenance") {
  /**
   * The engine's Reconciler and Gc behind the API. A gc or prune that executes
   * acts only on the intersection of the plan the user saw and a fresh one; a
   * failed action is reported (and the CLI fails), never dropped.
   */
  static readonly layer = Layer.effect(
    Maintenance,
    Effect.gen(function* () {
      const reconciler = yield* Reconciler
      const gc = yield* Gc
      return Maintenance.of({
        reconcile: api(reconciler.reconcile),
        gc: (request) =>
          Effect.gen(function* () {
            if (!request.execute) {
              const plan = yield* api(gc.plan)
              return { plan, executed: false, stopped: [], removed: [], failures: [] }
            }
            const shown: GcPlan = yield* requireShown(request.shown, "gc")
            return yield* gc.run(shown).pipe(
              Effect.map((report) => ({ ...report, executed: true })),
              Effect.catchTag("CleanupIncomplete", (incomplete) =>
                Effect.succeed({
                  plan: shown,
                  executed: true,
                  stopped: incomplete.stopped,
                  // gc removes sandboxes: these are their ids.
                  removed: incomplete.removed.map((id) => SandboxId.make(id)),
                  failures: incomplete.failures
                })
              ),
              api
            )
          }),
        prune: (request) =>
          Effect.gen(function* () {
            if (!request.execute) {
              const plan = yield* api(gc.planPrune)
              return { plan, executed: false, removed: { containers: [], volumes: [], directories: [] }, failures: [] }
            }
            const shown = yield* requireShown(request.shown, "prune")
            return yield* gc.prune(shown).pipe(
              Effect.map((report) => ({ ...report, executed: true })),
              Effect.catchTag("CleanupIncomplete", (incomplete) =>
                Effect.succeed({
                  plan: shown,
                  executed: true,
                  removed: removedOf(shown, incomplete.removed),
                  failures: incomplete.failures
                })
              ),
              api
            )
          }),
        gcTimer: gc.timer
      })
    })
  )
}
