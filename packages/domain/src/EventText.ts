import type { SandboxEvent, StatusChanged } from "./SandboxEvent.ts"
import type { SandboxStatus } from "./SandboxStatus.ts"

/**
 * What clients read of a sandbox's events, without effect (the CLI's fast
 * path uses it): which status ends a create or restart, and an event's line.
 */

/** Statuses that end a create or restart: a client following one stops there. */
export const isSettledStatus = (status: SandboxStatus): boolean =>
  status === "running" || status === "error" || status === "stopped"

/** True for the status change that ends a create or restart. */
export const isSettling = (event: SandboxEvent): event is StatusChanged =>
  event._tag === "StatusChanged" && isSettledStatus(event.status)

/** A human line for an event (`prbox logs`, the extension's output): rendering only, never parsed back. */
export const describeEvent = (event: SandboxEvent): string =>
  event._tag === "Progress"
    ? event.line
    : event.error === null
      ? `status: ${event.status}`
      : `status: ${event.status} (${event.error})`
