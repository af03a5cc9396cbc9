import { Schema } from "effect"

/** A file or an input is larger than the operation accepts; the reason names the limit and what to do. */
export class TooLarge extends Schema.TaggedError<TooLarge>()("TooLarge", {
  id: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.id}: ${this.reason}`
  }
}
