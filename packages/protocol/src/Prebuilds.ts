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
  usedAt: Schema.NullOr(Schema.Number),
  /** A copy of its files made ahead waits for the next open from it (absent from a daemon before spares). */
  spare: Schema.optionalKey(Schema.Boolean)
})
export type PrebuildView = typeof PrebuildView.Type

/** Prebuilds of this daemon: whether they are on, their disk cap and use, and each one, newest first. */
export const PrebuildStatus = Schema.Struct({
  enabled: Schema.Boolean,
  /** `prebuilds.maxGiB` in bytes; null when prebuilds are off. */
  capBytes: Schema.NullOr(Schema.Number),
  /** What the ready ones hold, a spare's copy counted. */
  usedBytes: Schema.Number,
  prebuilds: Schema.Array(PrebuildView)
})
export type PrebuildStatus = typeof PrebuildStatus.Type

/** How an asked-for prebuild ended well: made or refreshed now, already at the base's commit, or being made by another build. */
export const PrebuildOutcome = Schema.Literals(["made", "refreshed", "up to date", "being made"])
export type PrebuildOutcome = typeof PrebuildOutcome.Type

/**
 * What `POST /v1/prebuilds` streams (NDJSON), as a sandbox's events do: its
 * progress lines, then one `Finished` or `Failed` (a safe reason, never a
 * step's output), and the stream ends.
 */
export const PrebuildEvent = Schema.Union([
  Schema.TaggedStruct("Progress", { line: Schema.String }),
  Schema.TaggedStruct("Finished", { outcome: PrebuildOutcome, prebuild: PrebuildView }),
  Schema.TaggedStruct("Failed", { reason: Schema.String })
])
export type PrebuildEvent = typeof PrebuildEvent.Type
