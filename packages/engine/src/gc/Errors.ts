import { SandboxId } from "@prbox/domain"
import { Schema } from "effect"

/** Some mutation of a gc or prune run failed; the report says which. */
export class CleanupIncomplete extends Schema.TaggedError<CleanupIncomplete>()("CleanupIncomplete", {
  operation: Schema.String,
  failures: Schema.Array(Schema.Struct({ sandboxId: Schema.String, detail: Schema.String })),
  /** What did succeed, so a partly failed run still reports it (prune: containers and paths). */
  stopped: Schema.Array(SandboxId),
  removed: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.operation}: ${this.failures.length} action(s) failed: ${this.failures
      .map((f) => `${f.sandboxId}: ${f.detail}`)
      .join("; ")}`
  }
}
