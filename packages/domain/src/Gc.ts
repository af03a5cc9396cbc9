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

/**
 * One probe of code-server's `/healthz`. code-server answers
 * `{"status":"alive"|"expired","lastHeartbeat":<ms>}` ("expired" once no
 * heartbeat came for a minute; 0 before the first one): either form is an
 * answer. No answer (refused, an error, past the probe's deadline) and an
 * answer without a usable heartbeat are not.
 */
export type HeartbeatProbe =
  | { readonly _tag: "Answered"; readonly lastHeartbeat: number }
  | { readonly _tag: "Unanswered"; readonly detail: string }
  | { readonly _tag: "Malformed"; readonly detail: string }

/** Reads the heartbeat a probe returned: a time in ms since the epoch, else malformed. */
export const readHeartbeat = (lastHeartbeat: unknown): HeartbeatProbe =>
  typeof lastHeartbeat === "number" && Number.isSafeInteger(lastHeartbeat) && lastHeartbeat >= 0
    ? { _tag: "Answered", lastHeartbeat }
    : { _tag: "Malformed", detail: "no usable lastHeartbeat in the answer" }

/** Whether gc stops a running sandbox, and why. `uncertain` keeps are worth a log line. */
export type IdleDecision =
  | { readonly _tag: "Stop"; readonly reason: string }
  | { readonly _tag: "Keep"; readonly reason: string; readonly uncertain: boolean }

const minutes = (ms: number) => `${Math.floor(ms / 60_000)} min`

/**
 * Uncertainty counts as activity: a running sandbox is stopped only when its
 * API activity is older than the idle timeout and code-server answered with a
 * heartbeat older than it too. A probe that failed, timed out or answered
 * nonsense keeps it running.
 */
export const decideIdle = (
  probe: HeartbeatProbe,
  lastApiActivityAt: number,
  now: number,
  idleTimeoutMs: number
): IdleDecision => {
  if (now - lastApiActivityAt <= idleTimeoutMs) {
    return { _tag: "Keep", reason: `used ${minutes(now - lastApiActivityAt)} ago`, uncertain: false }
  }
  switch (probe._tag) {
    case "Unanswered":
      return { _tag: "Keep", reason: `heartbeat probe failed (${probe.detail}); counted as activity`, uncertain: true }
    case "Malformed":
      return {
        _tag: "Keep",
        reason: `heartbeat probe malformed (${probe.detail}); counted as activity`,
        uncertain: true
      }
    case "Answered":
      return now - probe.lastHeartbeat <= idleTimeoutMs
        ? { _tag: "Keep", reason: `heartbeat ${minutes(now - probe.lastHeartbeat)} ago`, uncertain: false }
        : {
            _tag: "Stop",
            reason: `idle: no use or heartbeat for ${minutes(now - Math.max(lastApiActivityAt, probe.lastHeartbeat))}`
          }
  }
}

/** A running row that was not probed (no published port) is as uncertain as a failed probe. */
const NOT_PROBED: HeartbeatProbe = { _tag: "Unanswered", detail: "not probed: no host port" }

export interface GcAssessment {
  readonly plan: GcPlan
  /** Running sandboxes kept only because their probe was uncertain. */
  readonly uncertain: ReadonlyArray<{ readonly id: SandboxId; readonly reason: string }>
}

export const assessGc = (
  rows: ReadonlyArray<Sandbox>,
  now: number,
  policy: GcPolicy,
  probes: ReadonlyMap<SandboxId, HeartbeatProbe>
): GcAssessment => {
  const running = rows
    .filter((row) => row.status === "running")
    .map((row) => ({
      id: row.id,
      decision: decideIdle(probes.get(row.id) ?? NOT_PROBED, row.lastActivityAt, now, policy.idleTimeoutMs)
    }))
  return {
    plan: {
      stop: running.filter((r) => r.decision._tag === "Stop").map((r) => r.id),
      remove: rows
        .filter(
          (row) =>
            (row.status === "stopped" || row.status === "error") &&
            now - (row.stoppedAt ?? row.lastActivityAt) > policy.cleanupDelayMs
        )
        .map((row) => row.id)
    },
    uncertain: running.flatMap(({ id, decision }) =>
      decision._tag === "Keep" && decision.uncertain ? [{ id, reason: decision.reason }] : []
    )
  }
}

/**
 * Deletion is revalidated: after a confirmation only what was shown and is
 * still true is acted on.
 */
export const intersectPlans = (shown: GcPlan, current: GcPlan): GcPlan => ({
  stop: current.stop.filter((id) => shown.stop.includes(id)),
  remove: current.remove.filter((id) => shown.remove.includes(id))
})
