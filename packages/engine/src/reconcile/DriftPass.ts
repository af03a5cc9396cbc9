import {
  type DriftAction,
  type DriftFacts,
  decideDrift,
  decideUnowned,
  orphanedError,
  POOL_LABEL,
  PROBE_LABEL,
  type RecordedContainer,
  type Sandbox,
  type SandboxId
} from "@prbox/domain"
import { Clock, Effect } from "effect"
import type { ContainerState, LabelledContainer } from "../ContainerSpec.ts"
import { LABELS } from "../ContainerSpec.ts"
import {
  collect,
  type PassContext,
  perRow,
  type ReconcileChange,
  type ReconcilePass,
  stopContainers,
  stopUnowned,
  writeStatus
} from "./ReconcilePass.ts"
import { containersOf } from "./ReconcileSnapshot.ts"

const fromListing = (row: Sandbox, listed: ReadonlyMap<string, LabelledContainer>): RecordedContainer => {
  if (row.containerId === null) return "none"
  const container = listed.get(row.containerId)
  if (container === undefined) return "unlisted"
  return container.running ? "running" : "exited"
}

/** The containers of a Compose sandbox's other services (LABELS.service). */
const services = (containers: ReadonlyArray<LabelledContainer>): ReadonlySet<string> =>
  new Set(containers.filter((c) => c.labels[LABELS.service] !== undefined).map((c) => c.containerId))

const fromInspect = (state: ContainerState): RecordedContainer =>
  state._tag === "Absent" ? "gone" : state._tag === "Running" ? "running" : "exited"

/**
 * Carries out what the drift table (packages/domain/src/Drift.ts) decided
 * for one row; an `Inspect` asks Docker and decides again.
 */
const carryOut = (
  ctx: PassContext,
  row: Sandbox,
  facts: DriftFacts,
  action: DriftAction,
  containers: ReadonlyArray<LabelledContainer>
): Effect.Effect<ReadonlyArray<ReconcileChange>, unknown> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const change = (text: string, containerId: string | null = row.containerId): ReconcileChange => ({
      sandboxId: row.id,
      containerId,
      action: text
    })
    const recorded = row.containerId === null ? [] : [row.containerId]
    switch (action._tag) {
      case "Leave":
        return []
      case "Inspect": {
        // The table asks for an inspect only of a container the row records.
        const container = fromInspect(yield* ctx.runtime.state(row.containerId as string))
        return yield* carryOut(ctx, row, facts, decideDrift({ ...facts, container }).action, containers)
      }
      case "MarkOrphaned": {
        const all = containersOf(row, containers)
        yield* stopContainers(ctx, row.id, all)
        // A Compose sandbox's own container, not one of its other services: removing it removes them.
        const others = services(containers)
        const containerId = row.containerId ?? all.find((id) => !others.has(id)) ?? all[0] ?? null
        yield* writeStatus(ctx, row.id, "error", { error: orphanedError(containerId), stoppedAt: now, containerId })
        return [change("orphaned: no worker owns this create", containerId)]
      }
      case "FinishStop":
        yield* stopContainers(ctx, row.id, recorded)
        yield* writeStatus(ctx, row.id, "stopped", { stoppedAt: now })
        return [change("finished an interrupted stop")]
      case "RecordGone":
        // The port stays: it is the sandbox's URL, asked for again by the container a restart creates.
        yield* action.to === "error"
          ? writeStatus(ctx, row.id, "error", { containerId: null })
          : writeStatus(ctx, row.id, "stopped", {
              containerId: null,
              stoppedAt: row.stoppedAt ?? now,
              detail: "its container is gone"
            })
        return [change("forgot a container Docker no longer has")]
      case "RecordExited":
        yield* writeStatus(ctx, row.id, "stopped", { stoppedAt: now, detail: "its container exited" })
        return [change("recorded that the container exited")]
      case "StopEnded":
        yield* stopContainers(ctx, row.id, recorded)
        return [change("stopped a container of an ended sandbox")]
    }
  })

/**
 * Pass 1: make rows and containers agree. Each row's facts (its status, a
 * live worker, what Docker says of its container) go through the drift
 * table; this pass only gathers them and carries the decision out. Labelled
 * containers without a row are stopped and reported; only prune removes them.
 * A pool container (`dev.prbox.pool`) is the pool's until a claim makes its
 * row: the pool's reconcile removes one with neither an entry nor a row. A
 * helper container (`dev.prbox.probe`) is the engine's own: LeftoverHelpers
 * removes the ones a killed daemon left.
 */
export const driftPass: ReconcilePass = (ctx, { rows, containers }) =>
  Effect.gen(function* () {
    const known = new Set<string>(rows.map((row) => row.id))
    const listed = new Map(containers.map((c) => [c.containerId, c]))

    const reconcileRow = (row: Sandbox) =>
      Effect.gen(function* () {
        const facts: DriftFacts = {
          status: row.status,
          workerPresent: yield* ctx.state.hasWorker(row.id),
          container: fromListing(row, listed)
        }
        const { action, stopUnrecorded } = decideDrift(facts)
        const changes: Array<ReconcileChange> = []
        if (stopUnrecorded) {
          // A Compose sandbox's other services run with its container: stopped here only when it does not run.
          const withIt = facts.container === "running" ? services(containers) : new Set<string>()
          const unrecorded = containersOf({ id: row.id, containerId: null }, containers).filter(
            (id) => id !== row.containerId && !withIt.has(id)
          )
          yield* stopContainers(ctx, row.id, unrecorded)
          for (const containerId of unrecorded) {
            changes.push({ sandboxId: row.id, containerId, action: "stopped a container the row does not record" })
          }
        }
        changes.push(...(yield* carryOut(ctx, row, facts, action, containers)))
        // A running sandbox no worker owns was started by an earlier daemon: whatever makes it reachable
        // here (a remote engine's forward) is this runtime's to open again.
        if (action._tag === "Leave" && row.status === "running" && facts.container === "running") {
          yield* ctx.runtime.attach(row.containerId as string)
        }
        return changes
      })

    const reconcileUnowned = (container: LabelledContainer) => {
      const sandboxId = container.labels[LABELS.sandbox] ?? null
      const report = (action: string): ReconcileChange => ({ sandboxId, containerId: container.containerId, action })
      return decideUnowned(container.running) === "StopUnowned"
        ? Effect.as(
            stopUnowned(ctx, container.containerId),
            report("stopped a container with no row (prune removes it)")
          )
        : Effect.succeed(report("container with no row (prune removes it)"))
    }

    const rowResults = yield* Effect.forEach(rows, (row) => perRow(row.id, reconcileRow(row)))
    // A pool container has no sandbox row until it is claimed: the pool's own reconcile judges it (WarmPool.ts).
    // A helper container (PROBE_LABEL) is the engine's own, maybe in use: a killed daemon's go at the next start.
    const unowned = containers.filter(
      (c) =>
        !known.has(c.labels[LABELS.sandbox] ?? "") &&
        c.labels[POOL_LABEL] === undefined &&
        c.labels[PROBE_LABEL] === undefined
    )
    const unownedResults = yield* Effect.forEach(unowned, (container) =>
      perRow((container.labels[LABELS.sandbox] ?? "") as SandboxId, reconcileUnowned(container))
    )
    return collect("drift", [...rowResults, ...unownedResults])
  })
