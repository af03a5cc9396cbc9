import type {
  EnvironmentPlan,
  HostPort,
  InvalidTransition,
  Progress,
  Provider,
  PullRequestInfo,
  PullRequestNumber,
  Sandbox,
  SandboxEnvironment,
  SandboxEvent,
  SandboxId,
  SandboxNotFound,
  SandboxStatus,
  StatusChanged,
  Timestamp
} from "@prbox/domain"
import type { Effect, Option, Redacted } from "effect"
import { Context, Schema } from "effect"

// Errors carry ids, paths and fixed reasons only: never a password or any
// other row content, so they can be logged and shown as they are.

/** A SQLite failure with no more specific meaning (busy, I/O, constraint). */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `store ${this.operation} failed: ${this.detail}`
  }
}

/** A stored row (or a row about to be written) is not a valid `Sandbox`. */
export class RowDecodeError extends Schema.TaggedError<RowDecodeError>()("RowDecodeError", {
  operation: Schema.String,
  rowId: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `sandbox row ${this.rowId} is invalid (${this.operation}): ${this.detail}`
  }
}

/** The database file cannot be used: not a database, corrupt, or from a newer prbox. It is left untouched. */
export class DatabaseUnreadable extends Schema.TaggedError<DatabaseUnreadable>()("DatabaseUnreadable", {
  operation: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `cannot use database ${this.path}: ${this.detail}`
  }
}

/** The state directory or database file cannot be made private to this user. */
export class InsecurePermissions extends Schema.TaggedError<InsecurePermissions>()("InsecurePermissions", {
  operation: Schema.String,
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `refusing to use ${this.path}: ${this.detail}`
  }
}

/** Another live row already holds this pull request key. */
export class LiveSandboxExists extends Schema.TaggedError<LiveSandboxExists>()("LiveSandboxExists", {
  operation: Schema.String,
  existingId: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.existingId} is already live for this pull request`
  }
}

/** What `insert` needs: a current row (host and password set); it starts in `creating`. */
export interface NewSandbox {
  readonly id: SandboxId
  readonly provider: Provider
  readonly host: string
  readonly account: string
  readonly repository: string
  readonly pullRequest: PullRequestNumber
  readonly accessPassword: Redacted.Redacted<string>
  readonly createdAt: Timestamp
  readonly lastActivityAt: Timestamp
  readonly title?: string | null
  readonly sourceBranch?: string | null
  readonly sourceCommit?: string | null
  readonly workspacePath?: string | null
  readonly detail?: string | null
  /** Null or absent: the local engine. */
  readonly engine?: string | null
  /** The remote the PR is fetched from (no credentials). */
  readonly remoteUrl?: string | null
}

/**
 * A status write. Every optional field: absent = unchanged, null = cleared.
 * `stoppedAt` is the caller's to set when moving to `stopped`.
 */
export interface StatusUpdate {
  readonly to: SandboxStatus
  /** Refuse (InvalidTransition) unless the current status is one of these. */
  readonly expectedFrom?: ReadonlyArray<SandboxStatus>
  readonly containerId?: string | null
  readonly hostPort?: HostPort | null
  readonly error?: string | null
  readonly setupError?: string | null
  readonly environment?: SandboxEnvironment | null
  readonly environmentPlan?: EnvironmentPlan | null
  readonly detail?: string | null
  readonly legacyRetiredAt?: Timestamp | null
  readonly destroyFenced?: boolean
  readonly stoppedAt?: Timestamp | null
  readonly workspacePath?: string | null
  readonly sourceBranch?: string | null
  readonly sourceCommit?: string | null
}

/** A pull request across hosts and accounts. */
export interface PullRequestSelector {
  readonly provider: Provider
  readonly repository: string
  readonly pullRequest: PullRequestNumber
}

/** A progress line to append: the store numbers it and files it under its sandbox. */
export type NewProgress = Omit<Progress, "seq" | "sandboxId">

/** A journal entry to append: the store numbers it and files it under its sandbox. */
export type NewLogEntry = Omit<StatusChanged, "seq" | "sandboxId"> | NewProgress

/** A status write and, when it was a status change, the journal entry written with it. */
export interface LoggedStatusUpdate {
  readonly row: Sandbox
  readonly logged: Option.Option<StatusChanged>
}

export interface ReadLogOptions {
  /** Only entries with a larger sequence number (for following a log). */
  readonly afterSeq?: number
  /** A positive integer. */
  readonly limit: number
}

type Failure = StoreError | RowDecodeError

export interface SandboxRepoShape {
  /**
   * The write generation: changes after every write to the database (by this
   * repository or, seen through SQLite's data_version, another connection).
   * Two reads at the same generation see the same rows, so a caller may keep
   * what it derived from them until the generation moves.
   */
  readonly generation: Effect.Effect<number>
  readonly insert: (input: NewSandbox) => Effect.Effect<Sandbox, LiveSandboxExists | Failure>
  readonly findById: (id: SandboxId) => Effect.Effect<Option.Option<Sandbox>, Failure>
  /** Every row of the PR, across hosts and accounts, legacy rows included; newest first. */
  readonly findByPr: (pr: PullRequestSelector) => Effect.Effect<ReadonlyArray<Sandbox>, Failure>
  /** Rows whose status is not terminal; newest first. */
  readonly findActive: () => Effect.Effect<ReadonlyArray<Sandbox>, Failure>
  /** Every row; newest first. */
  readonly findAll: () => Effect.Effect<ReadonlyArray<Sandbox>, Failure>
  /**
   * Read, check (`canTransition`, `expectedFrom`) and write in one write
   * transaction. A move back to a live status is refused with
   * LiveSandboxExists while another live row holds the key.
   */
  readonly updateStatus: (
    id: SandboxId,
    update: StatusUpdate
  ) => Effect.Effect<Sandbox, SandboxNotFound | InvalidTransition | LiveSandboxExists | Failure>
  /**
   * `updateStatus` and its StatusChanged entry (at `at`, with the row's error
   * after the write) in the same write transaction. The entry is written only
   * when the status changes or `update.error` is given: a write that only
   * records fields (a container id, a port) is not a status change. The
   * previous status is read inside the transaction; a refused write logs nothing.
   */
  readonly updateStatusAndLog: (
    id: SandboxId,
    update: StatusUpdate,
    at: Timestamp
  ) => Effect.Effect<LoggedStatusUpdate, SandboxNotFound | InvalidTransition | LiveSandboxExists | Failure>
  /** Set or clear the destroy fence without a status change (a stopped row stays stopped). */
  readonly setFence: (id: SandboxId, fenced: boolean) => Effect.Effect<Sandbox, SandboxNotFound | Failure>
  /** The row's last progress line. */
  readonly updateDetail: (id: SandboxId, detail: string | null) => Effect.Effect<void, SandboxNotFound | Failure>
  /** Appends a progress line and makes it the row's detail, in one write transaction; returns it as stored. */
  readonly updateDetailAndLog: (id: SandboxId, entry: NewProgress) => Effect.Effect<Progress, SandboxNotFound | Failure>
  /**
   * What the hosting service said of the row's pull request: its title,
   * author, state and base branch; `closedSeenAt` is `now` when first seen
   * merged or closed, kept while it stays so, cleared when open again.
   */
  readonly recordPullRequest: (
    id: SandboxId,
    info: PullRequestInfo,
    now: Timestamp
  ) => Effect.Effect<Sandbox, SandboxNotFound | Failure>
  /** `lastActivityAt = max(lastActivityAt, at)`: a late, older touch never moves it back. */
  readonly touch: (id: SandboxId, at: Timestamp) => Effect.Effect<void, SandboxNotFound | Failure>
  /** Appends a status change or a progress line; returns it as stored, numbered (increasing, never reused). */
  readonly appendLog: (id: SandboxId, entry: NewLogEntry) => Effect.Effect<SandboxEvent, SandboxNotFound | Failure>
  /** The sandbox's journal in order, each entry of the kind it was written as. */
  readonly readLog: (
    id: SandboxId,
    options: ReadLogOptions
  ) => Effect.Effect<ReadonlyArray<SandboxEvent>, SandboxNotFound | Failure>
  /** Deletes the row and its log in one transaction. */
  readonly delete: (id: SandboxId) => Effect.Effect<void, SandboxNotFound | Failure>
}

export class SandboxRepo extends Context.Service<SandboxRepo, SandboxRepoShape>()("prbox/store/SandboxRepo") {}
