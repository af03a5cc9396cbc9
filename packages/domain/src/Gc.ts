import type { SandboxId } from "./Ids.ts"
import type { Sandbox } from "./Sandbox.ts"

export interface GcPolicy {
  readonly idleTimeoutMs: number
  readonly cleanupDelayMs: number
}

/** What a gc run would do: stop idle running sandboxes, delete long-ended ones. */
export interface GcPlan {
  readonly stop: ReadonlyArray<SandboxId>
  readonly remove: ReadonlyArray<SandboxId>
}

/** The latest sign of use: an API touch, or code-server's own heartbeat. */
export const lastActivity = (row: Pick<Sandbox, "lastActivityAt">, heartbeat: number | undefined): number =>
  Math.max(row.lastActivityAt, heartbeat ?? 0)

export const planGc = (
  rows: ReadonlyArray<Sandbox>,
  now: number,
  policy: GcPolicy,
  heartbeats: ReadonlyMap<SandboxId, number>
): GcPlan => ({
  stop: rows
    .filter((row) => row.status === "running" && now - lastActivity(row, heartbeats.get(row.id)) > policy.idleTimeoutMs)
    .map((row) => row.id),
  remove: rows
    .filter(
      (row) =>
        (row.status === "stopped" || row.status === "error") &&
        now - (row.stoppedAt ?? row.lastActivityAt) > policy.cleanupDelayMs
    )
    .map((row) => row.id)
})

/**
 * Deletion is revalidated: after a confirmation only what was shown and is
 * still true is acted on.
 */
export const intersectPlans = (shown: GcPlan, current: GcPlan): GcPlan => ({
  stop: current.stop.filter((id) => shown.stop.includes(id)),
  remove: current.remove.filter((id) => shown.remove.includes(id))
})
