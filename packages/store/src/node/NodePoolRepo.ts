import { type PoolEntry, PoolState, SandboxId } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Effect, Layer, Redacted, Result, Schema } from "effect"
import { PoolRepo } from "../PoolRepo.ts"
import { RowDecodeError, StoreError } from "../SandboxRepo.ts"
import { sqliteDetail } from "./OpenDatabase.ts"
import { decodeRow, encodeRow } from "./Rows.ts"
import { newSandboxRow, sandboxInserts } from "./SandboxInsert.ts"
import { SqliteDatabase } from "./SqliteDatabase.ts"
import type { Transactions } from "./Transactions.ts"

interface RawEntry {
  readonly id: string
  readonly key: string
  readonly prebuild_id: string
  readonly base_commit: string
  readonly host: string
  readonly repository: string
  readonly state: string
  readonly container_id: string | null
  readonly host_port: number | null
  readonly access_password: string
  readonly workspace_path: string
  readonly environment: string
  readonly environment_plan: string
  readonly created_at: number
}

const COLUMNS =
  "id, key, prebuild_id, base_commit, host, repository, state, container_id, host_port, access_password, workspace_path, environment, environment_plan, created_at"

const decodeEntry = Schema.decodeUnknownResult(Schema.Struct({ id: SandboxId, state: PoolState }))

const toEntry = (raw: RawEntry): Result.Result<PoolEntry, RowDecodeError> =>
  Result.match(decodeEntry({ id: raw.id, state: raw.state }), {
    // The schema's message could quote the row: only where it failed is said.
    onFailure: () =>
      Result.fail(new RowDecodeError({ operation: "pool.decode", rowId: raw.id, detail: "id or state" })),
    onSuccess: ({ id, state }) =>
      Result.succeed({
        id,
        key: raw.key,
        prebuildId: raw.prebuild_id,
        baseCommit: raw.base_commit,
        host: raw.host,
        repository: raw.repository,
        state,
        containerId: raw.container_id,
        hostPort: raw.host_port,
        workspacePath: raw.workspace_path,
        createdAt: raw.created_at
      })
  })

const poolTable = (db: Database.Database, { run, write }: Transactions): PoolRepo["Service"] => {
  const insert = db.prepare(`INSERT INTO warm_pool (${COLUMNS}) VALUES (${COLUMNS.replace(/[a-z_]+/g, "?")})`)
  const ready = db.prepare<[string, number, string]>(
    "UPDATE warm_pool SET state = 'ready', container_id = ?, host_port = ? WHERE id = ? AND state = 'making'"
  )
  const list = db.prepare<[], RawEntry>(`SELECT ${COLUMNS} FROM warm_pool ORDER BY created_at, id`)
  const get = db.prepare<[string], RawEntry>(`SELECT ${COLUMNS} FROM warm_pool WHERE id = ?`)
  const oldestReady = db.prepare<[string], RawEntry>(
    `SELECT ${COLUMNS} FROM warm_pool WHERE key = ? AND state = 'ready' AND container_id IS NOT NULL AND host_port IS NOT NULL ORDER BY created_at, id LIMIT 1`
  )
  const remove = db.prepare<[string]>("DELETE FROM warm_pool WHERE id = ?")
  const { insertChecked } = sandboxInserts(db)

  return PoolRepo.of({
    insert: Effect.fn("PoolRepo.insert")(function* (entry) {
      yield* write("insertPool", () =>
        Result.succeed(
          void insert.run(
            entry.id,
            entry.key,
            entry.prebuildId,
            entry.baseCommit,
            entry.host,
            entry.repository,
            "making",
            null,
            null,
            Redacted.value(entry.accessPassword),
            entry.workspacePath,
            JSON.stringify(entry.environment),
            JSON.stringify(entry.environmentPlan),
            entry.createdAt
          )
        )
      )
    }),
    ready: Effect.fn("PoolRepo.ready")(function* (id, containerId, hostPort) {
      return yield* write("readyPool", () => Result.succeed(ready.run(containerId, hostPort, id).changes === 1))
    }),
    list: run("listPool", () => Result.all(list.all().map(toEntry))),
    claim: Effect.fn("PoolRepo.claim")(function* (key, pr) {
      return yield* write("claimPool", () =>
        Result.gen(function* () {
          const raw = oldestReady.get(key)
          if (raw === undefined) return undefined
          const id = SandboxId.make(raw.id)
          const { setupError, ...fields } = pr
          const fresh = newSandboxRow({ ...fields, id, accessPassword: Redacted.make(raw.access_password) })
          // The entry's environment is checked as a row's is: decoded with the rest of the new row.
          const columns = yield* encodeRow("claimPool", fresh)
          const row = yield* decodeRow("claimPool", {
            ...columns,
            status: "starting",
            setup_error: setupError,
            container_id: raw.container_id,
            host_port: raw.host_port,
            // Written once the PR's head is checked out in it (as a create writes it): a row killed before
            // is never restarted on the base's checkout.
            workspace_path: null,
            environment: JSON.parse(raw.environment),
            environment_plan: JSON.parse(raw.environment_plan)
          })
          // A refused insert writes nothing (the body's failure is not a throw: nothing may be written before it).
          const inserted = yield* insertChecked("claimPool", row)
          remove.run(raw.id)
          return { row: inserted, baseCommit: raw.base_commit, workspacePath: raw.workspace_path }
        })
      )
    }),
    take: Effect.fn("PoolRepo.take")(function* (id) {
      return yield* write("takePool", () =>
        Result.gen(function* () {
          const raw = get.get(id)
          if (raw === undefined) return undefined
          remove.run(id)
          return yield* toEntry(raw)
        })
      )
    })
  })
}

/** The warm pool's table, on the store's connection. */
export const layer: Layer.Layer<PoolRepo, StoreError, SqliteDatabase> = Layer.effect(
  PoolRepo,
  Effect.gen(function* () {
    const { db, transactions } = yield* SqliteDatabase
    return yield* Effect.try({
      try: () => poolTable(db, transactions),
      catch: (cause) => new StoreError({ operation: "openPool", detail: sqliteDetail(cause) })
    })
  })
)
