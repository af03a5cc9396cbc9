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
