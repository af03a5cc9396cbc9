import { retirementState, type Sandbox } from "@prbox/domain"
import { Clock, Effect } from "effect"
import type { LabelledContainer } from "../ContainerSpec.ts"
import {
  collect,
  type PassContext,
  perRow,
  type ReconcileChange,
  type ReconcilePass,
  stopContainers,
  writeStatus
} from "./ReconcilePass.ts"
import { containersOf } from "./ReconcileSnapshot.ts"

export const LEGACY_UNAUTHENTICATED = "legacy unauthenticated sandbox stopped; delete and recreate it"

/**
 * Retires a row: marked retiring (`stopping` + `legacyRetiredAt`) before any
 * container is touched, so a crash in between is finished by the next pass;
 * `stopped` only once Docker confirmed every container of it stopped.
 */
export const retire = (ctx: PassContext, row: Sandbox, containers: ReadonlyArray<LabelledContainer>) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (row.legacyRetiredAt === null || row.status !== "stopping") {
      yield* writeStatus(ctx, row.id, "stopping", { legacyRetiredAt: row.legacyRetiredAt ?? now })
    }
    yield* stopContainers(ctx, row.id, containersOf(row, containers))
    yield* writeStatus(ctx, row.id, "stopped", { stoppedAt: now })
  })

/**
 * Pass 2: rows written by schema v1. An unauthenticated row's containers are
 * stopped and the row marked in error; an authenticated hostless row is
 * retired (a later open creates its replacement); an interrupted retirement
 * is finished. A row whose worker is active waits for the next pass.
 */
export const legacyPass: ReconcilePass = (ctx, { rows, containers }) =>
  Effect.gen(function* () {
    const step = (row: Sandbox) =>
      Effect.gen(function* () {
        const state = retirementState(row)
        if (state === "current" || state === "retired") return []
        if (yield* ctx.state.hasWorker(row.id)) return []
        const change = (action: string): ReconcileChange => ({
          sandboxId: row.id,
          containerId: row.containerId,
          action
        })
        if (state === "unauthenticated") {
          const ids = containersOf(row, containers)
          const anyRunning = containers.some((c) => c.running && ids.includes(c.containerId))
          if (row.status === "error" && row.error === LEGACY_UNAUTHENTICATED && !anyRunning) return []
          yield* stopContainers(ctx, row.id, ids)
          yield* writeStatus(ctx, row.id, "error", { error: LEGACY_UNAUTHENTICATED })
          return [change("stopped an unauthenticated legacy sandbox")]
        }
        yield* retire(ctx, row, containers)
        return [
          change(state === "pending" ? "retired a hostless legacy sandbox" : "finished an interrupted retirement")
        ]
      })
    return collect("legacy", yield* Effect.forEach(rows, (row) => perRow(row.id, step(row))))
  })
