import { statePaths } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Context, Effect, Layer } from "effect"
import type { DatabaseUnreadable, InsecurePermissions, StoreError } from "../SandboxRepo.ts"
import { openDatabase } from "./OpenDatabase.ts"
import { securePrivateFiles } from "./StateFiles.ts"
import { type Transactions, transactions } from "./Transactions.ts"

export interface Options {
  /** The daemon's state directory (`$PRBOX_HOME`); the database is `statePaths(stateDir).database`. */
  readonly stateDir: string
  /** How long a write waits for another connection's lock (SQLite busy_timeout). */
  readonly busyTimeoutMillis?: number
}

const DEFAULT_BUSY_TIMEOUT_MILLIS = 5_000

/** The one connection the store's services share, and how their operations reach it. */
export interface SqliteDatabaseShape {
  readonly db: Database.Database
  readonly transactions: Transactions
}

/**
 * The state directory's database on better-sqlite3. Building the layer
 * secures the files, checks the database read-only, opens it (WAL,
 * busy_timeout) and migrates it; releasing the layer closes the connection.
 */
export class SqliteDatabase extends Context.Service<SqliteDatabase, SqliteDatabaseShape>()(
  "prbox/store/SqliteDatabase"
) {
  static readonly layer = (
    options: Options
  ): Layer.Layer<SqliteDatabase, InsecurePermissions | DatabaseUnreadable | StoreError> =>
    Layer.effect(
      SqliteDatabase,
      Effect.gen(function* () {
        const path = statePaths(options.stateDir).database
        yield* securePrivateFiles(options.stateDir, path)
        const db = yield* openDatabase(path, options.busyTimeoutMillis ?? DEFAULT_BUSY_TIMEOUT_MILLIS)
        return SqliteDatabase.of({ db, transactions: transactions(db) })
      })
    )
}
