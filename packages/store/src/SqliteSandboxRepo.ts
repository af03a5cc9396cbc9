import { statePaths } from "@prbox/domain"
import { Context, Effect, Layer } from "effect"
import { JobRepo } from "./JobRepo.ts"
import { openDatabase, sqliteDetail } from "./OpenDatabase.ts"
import { makeSandboxLog } from "./SandboxLog.ts"
import { type DatabaseUnreadable, type InsecurePermissions, SandboxRepo, StoreError } from "./SandboxRepo.ts"
import { makeSandboxRows } from "./SandboxRows.ts"
import { Settings } from "./Settings.ts"
import { makeJobRepo } from "./SqliteJobRepo.ts"
import { makeSettings } from "./SqliteSettings.ts"
import { securePrivateFiles } from "./StateFiles.ts"
import { transactions } from "./Transactions.ts"

export interface Options {
  /** The daemon's state directory (`$PRBOX_HOME`); the database is `statePaths(stateDir).database`. */
  readonly stateDir: string
  /** How long a write waits for another connection's lock (SQLite busy_timeout). */
  readonly busyTimeoutMillis?: number
}

const DEFAULT_BUSY_TIMEOUT_MILLIS = 5_000

const make = Effect.fnUntraced(function* (options: Options) {
  const path = statePaths(options.stateDir).database
  yield* securePrivateFiles(options.stateDir, path)
  const db = yield* openDatabase(path, options.busyTimeoutMillis ?? DEFAULT_BUSY_TIMEOUT_MILLIS)
  const tx = transactions(db)
  const log = makeSandboxLog(db, tx)
  const jobs = yield* Effect.try({
    try: () => makeJobRepo(db, tx, Date.now()),
    catch: (cause) => new StoreError({ operation: "markLostJobs", detail: sqliteDetail(cause) })
  })
  const rows = makeSandboxRows(db, tx, {
    deleteOwnedBy: (id) => {
      log.deleteEntriesOf(id)
      jobs.deleteJobsOf(id)
    },
    appendEntry: log.appendEntry
  })
  return Context.make(
    SandboxRepo,
    SandboxRepo.of({ generation: tx.generation, ...rows, appendLog: log.appendLog, readLog: log.readLog })
  ).pipe(Context.add(Settings, makeSettings(db, tx)), Context.add(JobRepo, jobs.repo))
})

/**
 * The repository, the daemon's settings and the jobs on the state directory's
 * database, through one connection. Opening it marks the jobs a previous
 * daemon left running `lost`. Building it secures the files, checks the database
 * read-only, opens it (WAL, busy_timeout) and migrates it; releasing the
 * layer closes the connection.
 */
export const layer = (
  options: Options
): Layer.Layer<SandboxRepo | Settings | JobRepo, InsecurePermissions | DatabaseUnreadable | StoreError> =>
  Layer.effectContext(make(options))
