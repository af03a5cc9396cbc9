import type { SandboxConflict, SandboxId, SandboxNotFound } from "@prbox/domain"
import type { JobRow } from "@prbox/store"
import { Context, type Effect } from "effect"
import type { HostFailure, InvalidPath, RuntimeError, StoreFailure } from "../Errors.ts"
import type { ExecOptions } from "../sandbox/SandboxService.ts"
import type { JobNotFound } from "./Errors.ts"

export type { JobStatus } from "@prbox/store"

/** A job as its row says, with how much output it wrote so far. */
export interface JobInfo extends JobRow {
  /** Bytes of output so far (stdout and stderr, interleaved as they came); 0 once forgotten. */
  readonly outputBytes: number
}

/** Output from `offset` on. */
export interface JobChunk {
  readonly job: JobInfo
  /** Where `output` starts: `offset`, or later when the bytes there are no longer kept. */
  readonly offset: number
  readonly output: string
  /** Ask again from here. */
  readonly nextOffset: number
  /** More output is kept past `nextOffset` now. */
  readonly more: boolean
}

export type JobsError = SandboxNotFound | SandboxConflict | InvalidPath | RuntimeError | HostFailure | StoreFailure

/**
 * Background commands of running sandboxes: started like `exec` (same
 * checks, user, folder, deadline), their output kept in the daemon (the last
 * JOB_OUTPUT_KEPT bytes) and read by offset. Jobs end with their sandbox; a
 * daemon restart marks the ones it had as `lost`. A running job counts as
 * activity for gc.
 */
export interface SandboxJobsShape {
  readonly start: (
    id: SandboxId,
    argv: ReadonlyArray<string>,
    options: Omit<ExecOptions, "maxOutputBytes">
  ) => Effect.Effect<JobInfo, JobsError>
  readonly read: (
    id: SandboxId,
    jobId: string,
    options: { readonly offset: number; readonly maxBytes: number }
  ) => Effect.Effect<JobChunk, SandboxNotFound | JobNotFound | StoreFailure>
  readonly list: (id: SandboxId) => Effect.Effect<ReadonlyArray<JobInfo>, SandboxNotFound | StoreFailure>
  readonly kill: (
    id: SandboxId,
    jobId: string
  ) => Effect.Effect<JobInfo, SandboxNotFound | JobNotFound | RuntimeError | StoreFailure>
}

export class SandboxJobs extends Context.Service<SandboxJobs, SandboxJobsShape>()("prbox/engine/SandboxJobs") {}
