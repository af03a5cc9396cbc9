import { join } from "node:path"
import {
  canTransition,
  InvalidTransition,
  isLive,
  isTerminal,
  type Sandbox,
  type SandboxEvent,
  type SandboxId,
  SandboxNotFound,
  SandboxStatus,
  type Timestamp
} from "@prbox/domain"
import Database from "better-sqlite3"
import { Effect, Layer, Option, Result } from "effect"
import { latestVersion, migrations, VERSION_TABLE } from "./Migrations.ts"
import {
  type ColumnValues,
  decodeLogRow,
  decodeRow,
  encodeRow,
  LOG_COLUMNS,
  type LogColumnValues,
  type RawRow,
  SANDBOX_COLUMNS,
  toLogColumns
} from "./Rows.ts"
import {
  DatabaseUnreadable,
  type InsecurePermissions,
  LiveSandboxExists,
  type NewLogEntry,
  type NewSandbox,
  type PullRequestSelector,
  type ReadLogOptions,
  type RowDecodeError,
  SandboxRepo,
  type StatusUpdate,
  StoreError
} from "./SandboxRepo.ts"
import { securePrivateFiles } from "./StateFiles.ts"

export interface Options {
  /** The daemon's state directory; the database is `<stateDir>/prbox.db`. */
  readonly stateDir: string
  /** How long a write waits for another connection's lock (SQLite busy_timeout). */
  readonly busyTimeoutMillis?: number
}

export const DATABASE_FILE = "prbox.db"

const DEFAULT_BUSY_TIMEOUT_MILLIS = 5_000

/** SQLite's messages name columns and constraints, never bound values, so they are safe to keep. */
const describe = (cause: unknown): string =>
  cause instanceof Database.SqliteError
    ? `${cause.code}: ${cause.message}`
    : cause instanceof Error
      ? cause.message
      : "unknown failure"

/** The schema version a file is at: 0 when empty, an error string when it is not ours. */
const readVersion = (db: Database.Database): Result.Result<number, string> => {
  const tables = db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()
  if (!tables.includes("schema_version")) {
    return tables.length === 0 ? Result.succeed(0) : Result.fail("not a prbox database (no schema_version table)")
  }
  const version = db.prepare<[], number | null>("SELECT max(version) FROM schema_version").pluck().get() ?? 0
  return version > latestVersion
    ? Result.fail(`schema version ${version} is newer than this prbox supports (${latestVersion})`)
    : Result.succeed(version)
}

/** What a file must pass before anything is written to it. */
const inspect = (db: Database.Database): Result.Result<number, string> =>
  db.pragma("quick_check", { simple: true }) === "ok" ? readVersion(db) : Result.fail("integrity check failed")

/**
 * A rollback journal left by a writer that died mid-transaction: only a
 * read-write connection can roll it back, which is SQLite's own recovery to
 * the last commit, not damage.
 */
const isHotJournal = (cause: unknown) =>
  cause instanceof Database.SqliteError && cause.code === "SQLITE_READONLY_ROLLBACK"

/**
 * Checks the file through a read-only connection first: a read-write one may
 * rewrite the header (journal mode) or checkpoint on close, and a file we
 * cannot use must stay exactly as it was. Succeeds with whether the file
 * still needs recovery (and so has to be checked again once recovered).
 */
const probe = (path: string) =>
  Effect.try({
    try: (): Result.Result<boolean, string> => {
      const db = new Database(path, { readonly: true, fileMustExist: true })
      try {
        return Result.map(inspect(db), () => false)
      } catch (cause) {
        if (isHotJournal(cause)) return Result.succeed(true)
        throw cause
      } finally {
        db.close()
      }
    },
    catch: describe
  }).pipe(
    Effect.flatMap(Effect.fromResult),
    Effect.mapError((detail) => new DatabaseUnreadable({ operation: "open", path, detail }))
  )

const connect = (path: string, busyTimeoutMillis: number, recover: boolean) =>
  Effect.try({
    try: () => {
      // `timeout` is SQLite's busy_timeout for this connection.
      const db = new Database(path, { fileMustExist: true, timeout: busyTimeoutMillis })
      try {
        // The first read rolls the hot journal back; then the file gets the checks the probe could not run.
        if (recover) {
          const checked = inspect(db)
          if (Result.isFailure(checked)) throw new Error(checked.failure)
        }
        const mode = db.pragma("journal_mode = WAL", { simple: true })
        if (mode !== "wal") throw new Error(`journal_mode is ${String(mode)}, not wal`)
        // WAL's default (NORMAL) can lose the last commits on power loss; an acknowledged write must survive it.
        db.pragma("synchronous = FULL")
        return db
      } catch (cause) {
        db.close()
        throw cause
      }
    },
    catch: (cause) => new DatabaseUnreadable({ operation: "open", path, detail: describe(cause) })
  })

const migrate = (db: Database.Database, path: string) =>
  Effect.try({
    try: () =>
      db
        .transaction(() => {
          db.exec(VERSION_TABLE)
          const current = readVersion(db)
          if (Result.isFailure(current)) return Result.fail(current.failure)
          const record = db.prepare<[number]>("INSERT INTO schema_version (version) VALUES (?)")
          for (const migration of migrations) {
            if (migration.version <= current.success) continue
            db.exec(migration.sql)
            record.run(migration.version)
          }
          return Result.void
        })
        .immediate(),
    catch: (cause) => new StoreError({ operation: "migrate", detail: describe(cause) })
  }).pipe(
    Effect.flatMap((result) =>
      Effect.fromResult(
        Result.mapError(result, (detail) => new DatabaseUnreadable({ operation: "migrate", path, detail }))
      )
    )
  )

const keep = <A>(next: A | undefined, current: A): A => (next === undefined ? current : next)

// Derived from the domain so queries and the status machine agree on "live".
// The partial index in Migrations.ts spells the same set out, frozen with its migration.
const TERMINAL_STATUSES = SandboxStatus.literals
  .filter(isTerminal)
  .map((status) => `'${status}'`)
  .join(", ")
const COLUMNS = SANDBOX_COLUMNS.join(", ")
const NEWEST_FIRST = "ORDER BY created_at DESC, rowid DESC"

const make = Effect.fnUntraced(function* (options: Options) {
  const path = join(options.stateDir, DATABASE_FILE)
  yield* securePrivateFiles(options.stateDir, path)
  const recover = yield* probe(path)
  const db = yield* Effect.acquireRelease(
    connect(path, options.busyTimeoutMillis ?? DEFAULT_BUSY_TIMEOUT_MILLIS, recover),
    (db) => Effect.sync(() => db.close())
  )
  yield* migrate(db, path)

  const selectById = db.prepare<[string], RawRow>(`SELECT ${COLUMNS} FROM sandboxes WHERE id = ?`)
  const selectAll = db.prepare<[], RawRow>(`SELECT ${COLUMNS} FROM sandboxes ${NEWEST_FIRST}`)
  const selectActive = db.prepare<[], RawRow>(
    `SELECT ${COLUMNS} FROM sandboxes WHERE status NOT IN (${TERMINAL_STATUSES}) ${NEWEST_FIRST}`
  )
  const selectByPr = db.prepare<[string, string, number], RawRow>(
    `SELECT ${COLUMNS} FROM sandboxes WHERE provider = ? AND repository = ? AND pull_request = ? ${NEWEST_FIRST}`
  )
  const selectLiveHolder = db
    .prepare<[string, string, string, string, number, string], string>(
      `SELECT id FROM sandboxes
       WHERE provider = ? AND host = ? AND account = ? AND repository = ? AND pull_request = ?
         AND status NOT IN (${TERMINAL_STATUSES}) AND id <> ?`
    )
    .pluck()
  const rowExists = db.prepare<[string], number>("SELECT 1 FROM sandboxes WHERE id = ?").pluck()
  const insertRow = db.prepare<ColumnValues>(
    `INSERT INTO sandboxes (${COLUMNS}) VALUES (${SANDBOX_COLUMNS.map((column) => `@${column}`).join(", ")})`
  )
  const updateRow = db.prepare<ColumnValues>(
    `UPDATE sandboxes SET ${SANDBOX_COLUMNS.filter((column) => column !== "id")
      .map((column) => `${column} = @${column}`)
      .join(", ")} WHERE id = @id`
  )
  const deleteRow = db.prepare<[string]>("DELETE FROM sandboxes WHERE id = ?")
  const deleteLog = db.prepare<[string]>("DELETE FROM sandbox_log WHERE sandbox_id = ?")
  const insertLog = db.prepare<LogColumnValues>(
    "INSERT INTO sandbox_log (sandbox_id, at, kind, status, line, error) VALUES (@sandbox_id, @at, @kind, @status, @line, @error)"
  )
  const selectLog = db.prepare<[string, number, number], RawRow>(
    `SELECT ${LOG_COLUMNS.join(", ")} FROM sandbox_log WHERE sandbox_id = ? AND seq > ? ORDER BY seq LIMIT ?`
  )

  // Every body is synchronous: better-sqlite3 runs it to the end in one call,
  // so no other fiber's statement can land inside a transaction.
  const run = <A, E>(operation: string, body: () => Result.Result<A, E>): Effect.Effect<A, E | StoreError> =>
    Effect.try({ try: body, catch: (cause) => new StoreError({ operation, detail: describe(cause) }) }).pipe(
      Effect.flatMap(Effect.fromResult)
    )
  // The write generation: bumped after every write transaction through this
  // connection (committed or not: a spare bump only costs a reader a re-read),
  // and when SQLite's data_version says another connection committed. A
  // version that cannot be read counts as a change: the reader then reads the
  // rows, and meets whatever failure there is where it is reported today.
  let writes = 0
  let external = 0
  const dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck()
  let lastDataVersion: number | undefined = dataVersion.get()
  const generation = Effect.sync(() => {
    let version: number | undefined
    try {
      version = dataVersion.get()
    } catch {
      version = undefined
    }
    if (version === undefined || version !== lastDataVersion) {
      lastDataVersion = version
      external++
    }
    return writes + external
  })

  // BEGIN IMMEDIATE takes the write lock up front: a read-then-write never
  // fails half-way on a lock upgrade, and busy_timeout applies to the wait.
  const write = <A, E>(operation: string, body: () => Result.Result<A, E>) =>
    run(operation, () => {
      try {
        return db.transaction(body).immediate()
      } finally {
        writes++
      }
    })
  const read = <A, E>(operation: string, body: () => Result.Result<A, E>) =>
    run(operation, () => db.transaction(body).deferred())

  const decodeAll = (operation: string, rows: ReadonlyArray<RawRow>) =>
    Result.all(rows.map((raw) => decodeRow(operation, raw)))

  const checkLiveHolder = (operation: string, row: Sandbox): Result.Result<void, LiveSandboxExists> => {
    if (row.host === null || !isLive(row)) return Result.void
    const holder = selectLiveHolder.get(row.provider, row.host, row.account, row.repository, row.pullRequest, row.id)
    return holder === undefined ? Result.void : Result.fail(new LiveSandboxExists({ operation, existingId: holder }))
  }

  /** Read-modify-write of one row in a write transaction; the new row is checked before it is stored. */
  const modify = <E>(operation: string, id: SandboxId, change: (current: Sandbox) => Result.Result<Sandbox, E>) =>
    write(operation, () =>
      Result.gen(function* () {
        const raw = selectById.get(id)
        if (raw === undefined) return yield* Result.fail(new SandboxNotFound({ id }))
        const next = yield* change(yield* decodeRow(operation, raw))
        updateRow.run(yield* encodeRow(operation, next))
        return next
      })
    )

  const insert = Effect.fn("SandboxRepo.insert")(function* (input: NewSandbox) {
    const row: Sandbox = {
      id: input.id,
      provider: input.provider,
      host: input.host,
      account: input.account,
      repository: input.repository,
      pullRequest: input.pullRequest,
      title: input.title ?? null,
      sourceBranch: input.sourceBranch ?? null,
      sourceCommit: input.sourceCommit ?? null,
      accessPassword: input.accessPassword,
      workspacePath: input.workspacePath ?? null,
      containerId: null,
      hostPort: null,
      status: "creating",
      detail: input.detail ?? null,
      error: null,
      createdAt: input.createdAt,
      lastActivityAt: input.lastActivityAt,
      stoppedAt: null,
      legacyRetiredAt: null,
      destroyFenced: false
    }
    return yield* write("insert", () =>
      Result.gen(function* () {
        const columns = yield* encodeRow("insert", row)
        yield* checkLiveHolder("insert", row)
        insertRow.run(columns)
        return row
      })
    )
  })

  const findById = Effect.fn("SandboxRepo.findById")(function* (id: SandboxId) {
    return yield* run("findById", () => {
      const raw = selectById.get(id)
      return raw === undefined ? Result.succeed(Option.none()) : Result.map(decodeRow("findById", raw), Option.some)
    })
  })

  const findByPr = Effect.fn("SandboxRepo.findByPr")(function* (pr: PullRequestSelector) {
    return yield* run("findByPr", () =>
      decodeAll("findByPr", selectByPr.all(pr.provider, pr.repository, pr.pullRequest))
    )
  })

  const findActive = Effect.fn("SandboxRepo.findActive")(function* () {
    return yield* run("findActive", () => decodeAll("findActive", selectActive.all()))
  })

  const findAll = Effect.fn("SandboxRepo.findAll")(function* () {
    return yield* run("findAll", () => decodeAll("findAll", selectAll.all()))
  })

  const updateStatus = Effect.fn("SandboxRepo.updateStatus")(function* (id: SandboxId, update: StatusUpdate) {
    return yield* modify(
      "updateStatus",
      id,
      (current): Result.Result<Sandbox, InvalidTransition | LiveSandboxExists> => {
        const allowed =
          canTransition(current.status, update.to) && (update.expectedFrom?.includes(current.status) ?? true)
        if (!allowed) return Result.fail(new InvalidTransition({ id, from: current.status, to: update.to }))
        const next: Sandbox = {
          ...current,
          status: update.to,
          containerId: keep(update.containerId, current.containerId),
          hostPort: keep(update.hostPort, current.hostPort),
          error: keep(update.error, current.error),
          detail: keep(update.detail, current.detail),
          legacyRetiredAt: keep(update.legacyRetiredAt, current.legacyRetiredAt),
          destroyFenced: keep(update.destroyFenced, current.destroyFenced),
          stoppedAt: keep(update.stoppedAt, current.stoppedAt),
          workspacePath: keep(update.workspacePath, current.workspacePath),
          sourceBranch: keep(update.sourceBranch, current.sourceBranch),
          sourceCommit: keep(update.sourceCommit, current.sourceCommit)
        }
        // Only a status write can make a row live again (restart), so only it can collide.
        return Result.map(checkLiveHolder("updateStatus", next), () => next)
      }
    )
  })

  const setFence = Effect.fn("SandboxRepo.setFence")(function* (id: SandboxId, fenced: boolean) {
    return yield* modify("setFence", id, (current) => Result.succeed({ ...current, destroyFenced: fenced }))
  })

  const updateDetail = Effect.fn("SandboxRepo.updateDetail")(function* (id: SandboxId, detail: string | null) {
    yield* modify("updateDetail", id, (current) => Result.succeed({ ...current, detail }))
  })

  const touch = Effect.fn("SandboxRepo.touch")(function* (id: SandboxId, at: Timestamp) {
    yield* modify("touch", id, (current) =>
      Result.succeed({ ...current, lastActivityAt: Math.max(current.lastActivityAt, at) })
    )
  })

  const appendLog = Effect.fn("SandboxRepo.appendLog")(function* (id: SandboxId, entry: NewLogEntry) {
    return yield* write("appendLog", (): Result.Result<SandboxEvent, SandboxNotFound> => {
      if (rowExists.get(id) === undefined) return Result.fail(new SandboxNotFound({ id }))
      const seq = Number(insertLog.run(toLogColumns(id, entry)).lastInsertRowid)
      return Result.succeed({ ...entry, seq, sandboxId: id })
    })
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

  const remove = Effect.fn("SandboxRepo.delete")(function* (id: SandboxId) {
    yield* write("delete", () => {
      if (deleteRow.run(id).changes === 0) return Result.fail(new SandboxNotFound({ id }))
      deleteLog.run(id)
      return Result.void
    })
  })

  return SandboxRepo.of({
    generation,
    insert,
    findById,
    findByPr,
    findActive,
    findAll,
    updateStatus,
    setFence,
    updateDetail,
    touch,
    appendLog,
    readLog,
    delete: remove
  })
})

/**
 * The repository on `<stateDir>/prbox.db`. Building it secures the files,
 * checks the database read-only, opens it (WAL, busy_timeout) and migrates it;
 * releasing the layer closes the connection.
 */
export const layer = (
  options: Options
): Layer.Layer<SandboxRepo, InsecurePermissions | DatabaseUnreadable | StoreError> =>
  Layer.effect(SandboxRepo, make(options))
