import { Schema } from "effect"

/** One prebuild as `prbox prebuild --status` shows it. */
export const PrebuildView = Schema.Struct({
  id: Schema.String,
  /** The environment's content key. */
  key: Schema.String,
  host: Schema.String,
  repository: Schema.String,
  baseBranch: Schema.String,
  baseCommit: Schema.String,
  state: Schema.Literals(["making", "ready", "failed"]),
  /** Why it failed: a safe reason (never a step's output). */
  reason: Schema.NullOr(Schema.String),
  /** Its workspace and home volumes and its image's own layer, once made. */
  sizeBytes: Schema.NullOr(Schema.Number),
  /** Epoch milliseconds. */
  startedAt: Schema.Number,
  readyAt: Schema.NullOr(Schema.Number),
  usedAt: Schema.NullOr(Schema.Number)
})
export type PrebuildView = typeof PrebuildView.Type

/** Prebuilds of this daemon: whether they are on, their disk cap and use, and each one, newest first. */
export const PrebuildStatus = Schema.Struct({
  enabled: Schema.Boolean,
  /** `prebuilds.maxGiB` in bytes; null when prebuilds are off. */
  capBytes: Schema.NullOr(Schema.Number),
  /** What the ready ones hold. */
  usedBytes: Schema.Number,
  prebuilds: Schema.Array(PrebuildView)
})
export type PrebuildStatus = typeof PrebuildStatus.Type
