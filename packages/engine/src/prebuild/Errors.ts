import { Schema } from "effect"

/** A prebuild could not be made; `detail` is safe to show (no secret, no container output). */
export class PrebuildFailed extends Schema.TaggedError<PrebuildFailed>()("PrebuildFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

/** `prbox prebuild` cannot make one here; `reason` says why (prebuilds off, today's path, a remote engine). */
export class PrebuildRefused extends Schema.TaggedError<PrebuildRefused>()("PrebuildRefused", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}
