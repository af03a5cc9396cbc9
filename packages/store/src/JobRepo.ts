import type { SandboxId } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type { RowDecodeError, StoreError } from "./SandboxRepo.ts"

/**
 * `lost`: the daemon that ran it stopped (its output was in that daemon's
 * memory); `killed`: by a kill or because its sandbox stopped.
 */
export type JobStatus = "running" | "exited" | "timed-out" | "killed" | "lost"

/** A background job as stored: what it ran and how it ended; its output is never stored. */
export interface JobRow {
  readonly jobId: string
  readonly sandboxId: SandboxId
  /** May hold whatever the user passed: shown to the user only, never logged. */
  readonly argv: ReadonlyArray<string>
  readonly status: JobStatus
  readonly exitCode: number | null
  readonly startedAt: number
  readonly endedAt: number | null
}

export interface JobEnd {
  readonly status: Exclude<JobStatus, "running">
  readonly exitCode: number | null
  readonly endedAt: number
}

/**
 * Background jobs' rows, on the repository's connection. Opening the store
 * marks every `running` row `lost` (no job outlives the daemon that ran it);
 * deleting a sandbox's row deletes its jobs.
 */
export interface JobRepoShape {
  readonly insert: (row: JobRow) => Effect.Effect<void, StoreError>
  /** Records the end of a running job; a job that already ended keeps its first end. */
  readonly end: (jobId: string, end: JobEnd) => Effect.Effect<void, StoreError>
  /** Oldest first. */
  readonly listOf: (sandboxId: SandboxId) => Effect.Effect<ReadonlyArray<JobRow>, StoreError | RowDecodeError>
  readonly get: (sandboxId: SandboxId, jobId: string) => Effect.Effect<JobRow | undefined, StoreError | RowDecodeError>
}

export class JobRepo extends Context.Service<JobRepo, JobRepoShape>()("prbox/store/JobRepo") {}
