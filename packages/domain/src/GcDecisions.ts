import type { SandboxId, Timestamp } from "./Ids.ts"
import type { PullRequestState } from "./PullRequestInfo.ts"
import type { Sandbox } from "./Sandbox.ts"

export interface GcPolicy {
  readonly idleTimeoutMs: number
  readonly cleanupDelayMs: number
  /** Delete the sandboxes of merged or closed pull requests (config `deleteWhenClosed`). */
  readonly deleteWhenClosed: boolean
  /** How long after the state was first seen (config `closedGraceMinutes`). */
  readonly closedGraceMs: number
}

/**
 * When the row's pull request was first seen merged or closed, given what the
 * hosting service says now: kept while it stays so, cleared when it is open again.
 */
export const closedSeenAtAfter = (state: PullRequestState, current: Timestamp | null, now: Timestamp) =>
  state === "open" ? null : (current ?? now)

/**
 * Why a sandbox's pull request makes it due for deletion, or undefined: only
 * with `deleteWhenClosed`, a merged/closed state the service reported (an
 * unknown one never counts) first seen at least the grace ago.
 */
export const closedReason = (row: Sandbox, now: number, policy: GcPolicy): string | undefined => {
  if (!policy.deleteWhenClosed || row.pullRequestState === null || row.pullRequestState === "open") return undefined
  if (row.closedSeenAt === null || now - row.closedSeenAt < policy.closedGraceMs) return undefined
  return `pull request ${row.pullRequestState} (first seen ${minutes(now - row.closedSeenAt)} ago)`
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
  /** The deletions due to a merged or closed pull request, and why. */
  readonly closed: ReadonlyArray<{ readonly id: SandboxId; readonly reason: string }>
}

/** An ended sandbox is deleted after the cleanup delay. */
const endedLongAgo = (row: Sandbox, now: number, policy: GcPolicy) =>
  now - (row.stoppedAt ?? row.lastActivityAt) > policy.cleanupDelayMs

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
      closed: closedReason(row, now, policy),
      decision: decideIdle(probes.get(row.id) ?? NOT_PROBED, row.lastActivityAt, now, policy.idleTimeoutMs)
    }))
  const ended = rows
    .filter((row) => row.status === "stopped" || row.status === "error")
    .map((row) => ({ id: row.id, closed: closedReason(row, now, policy), due: endedLongAgo(row, now, policy) }))
  // A running sandbox is in use until gc would stop it as idle: only then does a closed PR delete it.
  const idle = running.filter((r) => r.decision._tag === "Stop")
  const closed = [...idle, ...ended].flatMap(({ id, closed }) => (closed === undefined ? [] : [{ id, reason: closed }]))
  return {
    plan: {
      stop: idle.filter((r) => r.closed === undefined).map((r) => r.id),
      remove: [
        ...idle.filter((r) => r.closed !== undefined).map((r) => r.id),
        ...ended.filter((r) => r.due || r.closed !== undefined).map((r) => r.id)
      ]
    },
    uncertain: running.flatMap(({ id, decision }) =>
      decision._tag === "Keep" && decision.uncertain ? [{ id, reason: decision.reason }] : []
    ),
    closed
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
