import Database from "better-sqlite3"
import { Effect, Result } from "effect"
import { latestVersion, migrations, VERSION_TABLE } from "../Migrations.ts"
import { DatabaseUnreadable, StoreError } from "../SandboxRepo.ts"
import { nativeBinding } from "./NativeAddon.ts"

/** SQLite's messages name columns and constraints, never bound values, so they are safe to keep. */
export const sqliteDetail = (cause: unknown): string =>
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
      const db = new Database(path, { readonly: true, fileMustExist: true, nativeBinding: nativeBinding() })
      try {
        return Result.map(inspect(db), () => false)
      } catch (cause) {
        if (isHotJournal(cause)) return Result.succeed(true)
        throw cause
      } finally {
        db.close()
      }
    },
    catch: sqliteDetail
  }).pipe(
    Effect.flatMap(Effect.fromResult),
    Effect.mapError((detail) => new DatabaseUnreadable({ operation: "open", path, detail }))
  )

const connect = (path: string, busyTimeoutMillis: number, recover: boolean) =>
  Effect.try({
    try: () => {
      // `timeout` is SQLite's busy_timeout for this connection.
      const db = new Database(path, { fileMustExist: true, timeout: busyTimeoutMillis, nativeBinding: nativeBinding() })
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
    catch: (cause) => new DatabaseUnreadable({ operation: "open", path, detail: sqliteDetail(cause) })
  })

/** Every migration the file has not applied, in one write transaction: a crash leaves it at its old version. */
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
    catch: (cause) => new StoreError({ operation: "migrate", detail: sqliteDetail(cause) })
  }).pipe(
    Effect.flatMap((result) =>
      Effect.fromResult(
        Result.mapError(result, (detail) => new DatabaseUnreadable({ operation: "migrate", path, detail }))
      )
    )
  )

/**
 * The database file (already created private), checked read-only, opened
 * (WAL, busy_timeout, full sync) and migrated to the latest schema; the
 * connection is closed with the scope.
 */
export const openDatabase = Effect.fnUntraced(function* (path: string, busyTimeoutMillis: number) {
  const recover = yield* probe(path)
  const db = yield* Effect.acquireRelease(connect(path, busyTimeoutMillis, recover), (db) =>
    Effect.sync(() => db.close())
  )
  yield* migrate(db, path)
  return db
})
