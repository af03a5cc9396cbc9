import { Progress, type SandboxEvent, type SandboxId, SandboxNotFound, StatusChanged } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Effect, Result, Schema } from "effect"
import { type NewLogEntry, type ReadLogOptions, RowDecodeError, type SandboxRepoShape } from "../SandboxRepo.ts"
import { type RawRow, safeSummary } from "./Rows.ts"
import type { Transactions } from "./Transactions.ts"

/** The columns of a log row, in the order every log SELECT names them. */
const LOG_COLUMNS = ["seq", "sandbox_id", "at", "kind", "status", "line", "error"] as const

interface LogColumnValues {
  readonly sandbox_id: string
  readonly at: number
  readonly kind: "status" | "progress"
  readonly status: string
  readonly line: string | null
  readonly error: string | null
}

/** A journal entry as a log row: its kind in `kind`, a line only for progress, an error only for a status change. */
const toLogColumns = (sandboxId: SandboxId, entry: NewLogEntry): LogColumnValues =>
  entry._tag === "StatusChanged"
    ? { sandbox_id: sandboxId, at: entry.at, kind: "status", status: entry.status, line: null, error: entry.error }
    : { sandbox_id: sandboxId, at: entry.at, kind: "progress", status: entry.status, line: entry.line, error: null }

const decodeStatusChanged = Schema.decodeUnknownResult(StatusChanged)
const decodeProgress = Schema.decodeUnknownResult(Progress)

/** A log row as its event: the kind column picks the variant, so a bad field is reported by name. */
const decodeLogRow = (
  operation: string,
  sandboxId: string,
  raw: RawRow
): Result.Result<SandboxEvent, RowDecodeError> => {
  const invalid = (detail: string) =>
    new RowDecodeError({ operation, rowId: sandboxId, detail: `log entry ${String(raw.seq)}: ${detail}` })
  const common = { seq: raw.seq, sandboxId: raw.sandbox_id, at: raw.at, status: raw.status }
  const decoded: Result.Result<SandboxEvent, Schema.SchemaError> | undefined =
    raw.kind === "status"
      ? decodeStatusChanged({ _tag: "StatusChanged", ...common, error: raw.error })
      : raw.kind === "progress"
        ? decodeProgress({ _tag: "Progress", ...common, line: raw.line })
        : undefined
  return decoded === undefined
    ? Result.fail(invalid("kind is neither status nor progress"))
    : Result.mapError(decoded, (error) => invalid(safeSummary(error)))
}

/** An entry as stored: numbered and filed under its sandbox. */
export type Numbered<E extends NewLogEntry> = E & { readonly seq: number; readonly sandboxId: SandboxId }

export interface SandboxLog extends Pick<SandboxRepoShape, "appendLog" | "readLog"> {
  /** Appends an entry without a check or a transaction of its own: for a row write's transaction. */
  readonly appendEntry: <E extends NewLogEntry>(id: SandboxId, entry: E) => Numbered<E>
  /** Removes a sandbox's entries; synchronous, for the row delete's transaction. */
  readonly deleteEntriesOf: (id: SandboxId) => void
}

/** The journal of status changes and progress lines: an append-only table, numbered by `seq`. */
export const sandboxLogTable = (db: Database.Database, { write, read }: Transactions): SandboxLog => {
  const rowExists = db.prepare<[string], number>("SELECT 1 FROM sandboxes WHERE id = ?").pluck()
  const insertLog = db.prepare<LogColumnValues>(
    `INSERT INTO sandbox_log (sandbox_id, at, kind, status, line, error)
     VALUES (@sandbox_id, @at, @kind, @status, @line, @error)`
  )
  const selectLog = db.prepare<[string, number, number], RawRow>(
    `SELECT ${LOG_COLUMNS.join(", ")} FROM sandbox_log WHERE sandbox_id = ? AND seq > ? ORDER BY seq LIMIT ?`
  )
  const deleteLog = db.prepare<[string]>("DELETE FROM sandbox_log WHERE sandbox_id = ?")

  const appendEntry = <E extends NewLogEntry>(id: SandboxId, entry: E): Numbered<E> => {
    const seq = Number(insertLog.run(toLogColumns(id, entry)).lastInsertRowid)
    return { ...entry, seq, sandboxId: id }
  }

  const appendLog = Effect.fn("SandboxRepo.appendLog")(function* (id: SandboxId, entry: NewLogEntry) {
    return yield* write(
      "appendLog",
      (): Result.Result<SandboxEvent, SandboxNotFound> =>
        rowExists.get(id) === undefined
          ? Result.fail(new SandboxNotFound({ id }))
          : Result.succeed(appendEntry(id, entry))
    )
  })

  const readLog = Effect.fn("SandboxRepo.readLog")(function* (id: SandboxId, options: ReadLogOptions) {
    // SQLite reads a negative LIMIT as "no limit": a bad page size is a bug in the caller.
    if (!Number.isInteger(options.limit) || options.limit < 1) {
      return yield* Effect.die(new RangeError(`readLog limit must be a positive integer, got ${options.limit}`))
    }
    return yield* read(
      "readLog",
      (): Result.Result<Array<SandboxEvent>, SandboxNotFound | RowDecodeError> =>
        rowExists.get(id) === undefined
          ? Result.fail(new SandboxNotFound({ id }))
          : Result.all(
              selectLog.all(id, options.afterSeq ?? 0, options.limit).map((raw) => decodeLogRow("readLog", id, raw))
            )
    )
  })

  return { appendLog, appendEntry, readLog, deleteEntriesOf: (id) => void deleteLog.run(id) }
}
