import { Schema } from "effect"

/** Docker (or the store) could not be enumerated: the pass changed nothing. */
export class DiscoveryFailed extends Schema.TaggedError<DiscoveryFailed>()("DiscoveryFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `reconcile could not list ${this.operation}: ${this.detail}; nothing was changed`
  }
}
