/** The sandbox operations' own refusals. */
import { PUSH_REFUSALS } from "@prbox/domain"
import { Schema } from "effect"

/** Docker did not confirm a stop or removal: the sandbox is fenced until `prbox rm` succeeds. */
export class DestroyNotConfirmed extends Schema.TaggedError<DestroyNotConfirmed>()("DestroyNotConfirmed", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.id}: Docker did not confirm the container is gone (${this.detail}); it is fenced until \`prbox rm ${this.id}\` succeeds`
  }
}

/**
 * `prbox push` pushed nothing, and changed nothing: `kind` says why
 * (PUSH_REFUSALS), the reason says what to do.
 */
export class PushRefused extends Schema.TaggedError<PushRefused>()("PushRefused", {
  id: Schema.String,
  kind: Schema.Literals(PUSH_REFUSALS),
  reason: Schema.String,
  /** The workspace's uncommitted files, for `uncommitted-changes`; else empty. */
  changedFiles: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `sandbox ${this.id} pushed nothing: ${this.reason}`
  }
}

/**
 * `prbox update` moved nothing: the workspace has changes of its own, or the
 * new head is not a fast-forward and `--force` was not given. Nothing was lost.
 */
export class UpdateRefused extends Schema.TaggedError<UpdateRefused>()("UpdateRefused", {
  id: Schema.String,
  reason: Schema.String,
  /** The workspace's changed files (tracked and untracked); empty when the refusal is about history. */
  changedFiles: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `sandbox ${this.id} was not updated: ${this.reason}`
  }
}
