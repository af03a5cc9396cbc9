import { SandboxId } from "@prbox/domain"
import { Schema } from "effect"

/**
 * A warm pool container as `prbox ls --pool` shows it: never its password
 * (it becomes the claiming sandbox's, shown only then).
 */
export const PoolView = Schema.Struct({
  id: SandboxId,
  host: Schema.String,
  repository: Schema.String,
  /** Its environment key's first 12 characters. */
  keyPrefix: Schema.String,
  state: Schema.Literals(["making", "ready"]),
  /** Milliseconds since epoch it was made. */
  createdAt: Schema.Number,
  port: Schema.NullOr(Schema.Number)
})
export type PoolView = typeof PoolView.Type

export const PoolList = Schema.Array(PoolView)
export type PoolList = typeof PoolList.Type
