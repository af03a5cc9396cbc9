import { Schema } from "effect"
import { SandboxStatus } from "./SandboxStatus.ts"

// Errors carry only ids, statuses and fixed reasons: never a password, a token
// or a command line, so they can be shown, logged and stored as they are.

export class SandboxNotFound extends Schema.TaggedError<SandboxNotFound>()("SandboxNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `no sandbox with id ${this.id}`
  }
}

export class InvalidTransition extends Schema.TaggedError<InvalidTransition>()("InvalidTransition", {
  id: Schema.String,
  from: SandboxStatus,
  to: SandboxStatus
}) {
  override get message(): string {
    return `sandbox ${this.id} cannot go from ${this.from} to ${this.to}`
  }
}

/**
 * What a conflict is about, for clients that act on it (an agent's tool error
 * code): the sandbox is not running, or an unconfirmed destroy fenced it.
 */
export const ConflictState = Schema.Literals(["not-running", "fenced"])
export type ConflictState = typeof ConflictState.Type

/** The request contradicts the sandbox's state (stopping, fenced, retired, ...). */
export class SandboxConflict extends Schema.TaggedError<SandboxConflict>()("SandboxConflict", {
  id: Schema.String,
  reason: Schema.String,
  state: Schema.optionalKey(ConflictState)
}) {
  override get message(): string {
    return `sandbox ${this.id}: ${this.reason}`
  }
}
