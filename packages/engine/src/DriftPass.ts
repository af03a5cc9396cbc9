import { isCreateStep, type Sandbox, type SandboxId } from "@prbox/domain"
import { Clock, Effect } from "effect"
import { LABELS } from "./Labels.ts"
import {
  collect,
  containersOf,
  discover,
  type PassContext,
  perRow,
  type ReconcileChange,
  stopContainers
} from "./Reconcile.ts"

/**
 * Pass 1: make rows and containers agree. A row no live worker owns is
 * judged against what Docker lists:
 * - a create step (no worker owns it) → `error`, its containers stopped and
 *   recorded: `orphaned (no container)` when there are none;
 * - its container is gone → `stopped`, the container forgotten;
 * - it claims to run but its container exited → `stopped`;
 * - it is `stopping` (a stop was cut short) → container stopped, `stopped`;
 * - it is ended but its container runs → the container is stopped.
 * Labelled containers without a row are stopped and reported; only prune removes them.
 */
export const driftPass = (ctx: PassContext) =>
  Effect.gen(function* () {
    const { rows, containers } = yield* discover(ctx)
    const known = new Set<string>(rows.map((row) => row.id))
    const byId = new Map(containers.map((c) => [c.containerId, c]))

    const reconcileRow = (row: Sandbox) =>
      Effect.gen(function* () {
        if (yield* ctx.state.hasWorker(row.id)) return []
        const now = yield* Clock.currentTimeMillis
        const change = (action: string, containerId: string | null = row.containerId): ReconcileChange => ({
          sandboxId: row.id,
          containerId,
          action
        })
        const unrecorded = containersOf({ id: row.id, containerId: null }, containers).filter(
          (id) => id !== row.containerId
        )
        if (isCreateStep(row.status)) {
          // A create no worker owns will never finish: its containers are
          // stopped (and recorded), and the row says so; an open restarts it.
          const all = containersOf(row, containers)
          yield* stopContainers(ctx, row.id, all)
          const containerId = row.containerId ?? all[0] ?? null
          yield* ctx.state.writeStatus(row.id, "error", {
            error: containerId === null ? "orphaned (no container)" : "interrupted before it was ready",
            stoppedAt: now,
            containerId
          })
          return [change("orphaned: no worker owns this create", containerId)]
        }
        const changes: Array<ReconcileChange> = []
        if (unrecorded.length > 0) {
          yield* stopContainers(ctx, row.id, unrecorded)
          changes.push(...unrecorded.map((id) => change("stopped a container the row does not record", id)))
        }
        if (row.containerId === null) {
          if (row.status === "stopping") {
            yield* ctx.state.writeStatus(row.id, "stopped", { stoppedAt: now })
            changes.push(change("finished an interrupted stop"))
          }
          return changes
        }
        // Absent from the listing is not proof of absence (a container may lack
        // our labels, e.g. one from schema v1): only an inspect decides "gone".
        const listed = byId.get(row.containerId)
        const state = listed === undefined ? yield* ctx.runtime.state(row.containerId) : undefined
        const container =
          listed ?? (state === undefined || state._tag === "Absent" ? undefined : { running: state._tag === "Running" })
        if (container === undefined) {
          if (row.status === "error") {
            yield* ctx.state.writeStatus(row.id, "error", { containerId: null, hostPort: null })
          } else {
            yield* ctx.state.writeStatus(row.id, "stopped", {
              containerId: null,
              hostPort: null,
              stoppedAt: row.stoppedAt ?? now,
              detail: "its container is gone"
            })
          }
          changes.push(change("forgot a container Docker no longer has"))
          return changes
        }
        if (row.status === "stopping") {
          yield* stopContainers(ctx, row.id, [row.containerId])
          yield* ctx.state.writeStatus(row.id, "stopped", { stoppedAt: now })
          changes.push(change("finished an interrupted stop"))
        } else if ((row.status === "running" || row.status === "starting") && !container.running) {
          yield* ctx.state.writeStatus(row.id, "stopped", { stoppedAt: now, detail: "its container exited" })
          changes.push(change("recorded that the container exited"))
        } else if ((row.status === "stopped" || row.status === "error") && container.running) {
          yield* stopContainers(ctx, row.id, [row.containerId])
          changes.push(change("stopped a container of an ended sandbox"))
        }
        return changes
      })

    const rowResults = yield* Effect.forEach(rows, (row) => perRow(row.id, reconcileRow(row)))
    const strays = containers.filter((c) => !known.has(c.labels[LABELS.sandbox] ?? ""))
    const strayResults = yield* Effect.forEach(strays, (stray) =>
      perRow(
        (stray.labels[LABELS.sandbox] ?? "") as SandboxId,
        Effect.map(
          stray.running ? ctx.runtime.stop(stray.containerId) : Effect.void,
          (): ReconcileChange => ({
            sandboxId: stray.labels[LABELS.sandbox] ?? null,
            containerId: stray.containerId,
            action: stray.running
              ? "stopped a container with no row (prune removes it)"
              : "container with no row (prune removes it)"
          })
        )
      )
    )
    return collect("drift", [...rowResults, ...strayResults])
  })
