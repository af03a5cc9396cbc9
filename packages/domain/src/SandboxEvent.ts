import { Schema } from "effect"
import { SandboxId, Timestamp } from "./Ids.ts"
import { SandboxStatus } from "./SandboxStatus.ts"

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/**
 * What a sandbox's journal records, and what clients follow: a status change
 * and a progress line are distinct variants, so a client switches on `_tag`
 * and never reads meaning out of a line's text. `seq` orders a sandbox's
 * events (it is the log's sequence number: resume after it).
 */
const journalFields = { seq: PositiveInt, sandboxId: SandboxId, at: Timestamp }

/** The row moved to `status`; `error` is the row's stored error when it has one. */
export const StatusChanged = Schema.TaggedStruct("StatusChanged", {
  ...journalFields,
  status: SandboxStatus,
  error: Schema.NullOr(Schema.String)
})
export type StatusChanged = typeof StatusChanged.Type

/** A line of progress (a git or build line, a setup step's output), written while the row was `status`. */
export const Progress = Schema.TaggedStruct("Progress", {
  ...journalFields,
  status: SandboxStatus,
  line: Schema.String
})
export type Progress = typeof Progress.Type

export const SandboxEvent = Schema.Union([StatusChanged, Progress])
export type SandboxEvent = typeof SandboxEvent.Type
