import type Database from "better-sqlite3"
import { Effect, type Result } from "effect"
import { StoreError } from "../SandboxRepo.ts"
import { sqliteDetail } from "./OpenDatabase.ts"

type Body<A, E> = () => Result.Result<A, E>

/** How the repository's operations reach the connection. */
export interface Transactions {
  /** One statement's worth of work, no explicit transaction. */
  readonly run: <A, E>(operation: string, body: Body<A, E>) => Effect.Effect<A, E | StoreError>
  /** A read transaction: every statement of the body sees one snapshot. */
  readonly read: <A, E>(operation: string, body: Body<A, E>) => Effect.Effect<A, E | StoreError>
  /** A write transaction, holding the write lock from its start. */
  readonly write: <A, E>(operation: string, body: Body<A, E>) => Effect.Effect<A, E | StoreError>
  /** See `SandboxRepoShape.generation`. */
  readonly generation: Effect.Effect<number>
}

/**
 * Every body is synchronous: better-sqlite3 runs it to the end in one call,
 * so no other fiber's statement can land inside a transaction. A thrown
 * SQLite error becomes a StoreError; a body's own failure is passed on.
 */
export const transactions = (db: Database.Database): Transactions => {
  const run = <A, E>(operation: string, body: Body<A, E>): Effect.Effect<A, E | StoreError> =>
    Effect.try({ try: body, catch: (cause) => new StoreError({ operation, detail: sqliteDetail(cause) }) }).pipe(
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

  return {
    run,
    // BEGIN IMMEDIATE takes the write lock up front: a read-then-write never
    // fails half-way on a lock upgrade, and busy_timeout applies to the wait.
    write: (operation, body) =>
      run(operation, () => {
        try {
          return db.transaction(body).immediate()
        } finally {
          writes++
        }
      }),
    read: (operation, body) => run(operation, () => db.transaction(body).deferred()),
    generation
  }
}
