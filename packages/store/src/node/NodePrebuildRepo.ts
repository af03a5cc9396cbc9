import type { Prebuild } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Effect, Layer, Result, Schema } from "effect"
import { PREBUILD_ERROR_CHARS, PrebuildRepo } from "../PrebuildRepo.ts"
import { RowDecodeError, StoreError } from "../SandboxRepo.ts"
import { sqliteDetail } from "./OpenDatabase.ts"
import { SqliteDatabase } from "./SqliteDatabase.ts"
import type { Transactions } from "./Transactions.ts"

interface RawPrebuild {
  readonly id: string
  readonly key: string
  readonly host: string
  readonly repository: string
  readonly base_branch: string
  readonly base_commit: string
  readonly image: string | null
  readonly volume: string | null
  readonly size_bytes: number | null
  readonly state: string
  readonly error: string | null
  readonly started_at: number
  readonly ready_at: number | null
  readonly used_at: number | null
}

const COLUMNS =
  "id, key, host, repository, base_branch, base_commit, image, volume, size_bytes, state, error, started_at, ready_at, used_at"

const decodeState = Schema.decodeUnknownResult(Schema.Literals(["making", "ready", "failed"]))

const toPrebuild = (raw: RawPrebuild): Result.Result<Prebuild, RowDecodeError> =>
  Result.match(decodeState(raw.state), {
    onFailure: (error) =>
      Result.fail(new RowDecodeError({ operation: "prebuild.decode", rowId: raw.id, detail: error.message })),
    onSuccess: (state) =>
      Result.succeed({
        id: raw.id,
        key: raw.key,
        host: raw.host,
        repository: raw.repository,
        baseBranch: raw.base_branch,
        baseCommit: raw.base_commit,
        image: raw.image,
        volume: raw.volume,
        sizeBytes: raw.size_bytes,
        state,
        error: raw.error,
        startedAt: raw.started_at,
        readyAt: raw.ready_at,
        usedAt: raw.used_at
      })
  })

type Row = [
  string,
  string,
  string,
  string,
  string,
  string,
  string | null,
  string | null,
  number | null,
  string,
  string | null,
  number,
  number | null,
  number | null
]

const prebuildsTable = (db: Database.Database, { run, write }: Transactions) => {
  const insert = db.prepare<Row>(`INSERT INTO prebuilds (${COLUMNS}) VALUES (${COLUMNS.replace(/[a-z_]+/g, "?")})`)
  const get = db.prepare<[string], RawPrebuild>(`SELECT ${COLUMNS} FROM prebuilds WHERE id = ?`)
  const list = db.prepare<[], RawPrebuild>(`SELECT ${COLUMNS} FROM prebuilds ORDER BY started_at DESC, id DESC`)
  const readyFor = db.prepare<[string], RawPrebuild>(
    `SELECT ${COLUMNS} FROM prebuilds WHERE key = ? AND state = 'ready' ORDER BY ready_at DESC, id DESC LIMIT 1`
  )
  const ready = db.prepare<[string | null, string, number, number, string]>(
    "UPDATE prebuilds SET state = 'ready', image = ?, volume = ?, size_bytes = ?, ready_at = ? WHERE id = ? AND state = 'making'"
  )
  const failed = db.prepare<[string, string]>(
    "UPDATE prebuilds SET state = 'failed', error = ? WHERE id = ? AND state = 'making'"
  )
  const used = db.prepare<[number, number, string]>(
    "UPDATE prebuilds SET used_at = MAX(COALESCE(used_at, ?), ?) WHERE id = ?"
  )
  const remove = db.prepare<[string]>("DELETE FROM prebuilds WHERE id = ?")

  return PrebuildRepo.of({
    insert: Effect.fn("PrebuildRepo.insert")(function* (row) {
      yield* write("insertPrebuild", () =>
        Result.succeed(
          void insert.run(
            row.id,
            row.key,
            row.host,
            row.repository,
            row.baseBranch,
            row.baseCommit,
            row.image,
            row.volume,
            row.sizeBytes,
            row.state,
            row.error === null ? null : row.error.slice(0, PREBUILD_ERROR_CHARS),
            row.startedAt,
            row.readyAt,
            row.usedAt
          )
        )
      )
    }),
    get: Effect.fn("PrebuildRepo.get")(function* (id) {
      return yield* run("getPrebuild", () => {
        const raw = get.get(id)
        return raw === undefined ? Result.succeed(undefined) : toPrebuild(raw)
      })
    }),
    list: run("listPrebuilds", () => Result.all(list.all().map(toPrebuild))),
    readyFor: Effect.fn("PrebuildRepo.readyFor")(function* (key) {
      return yield* run("readyPrebuild", () => {
        const raw = readyFor.get(key)
        return raw === undefined ? Result.succeed(undefined) : toPrebuild(raw)
      })
    }),
    finish: Effect.fn("PrebuildRepo.finish")(function* (id, end) {
      return yield* write("finishPrebuild", () =>
        Result.succeed(
          (end.state === "ready"
            ? ready.run(end.image, end.volume, end.sizeBytes, end.readyAt, id)
            : failed.run(end.error.slice(0, PREBUILD_ERROR_CHARS), id)
          ).changes === 1
        )
      )
    }),
    markUsed: Effect.fn("PrebuildRepo.markUsed")(function* (id, at) {
      yield* write("usePrebuild", () => Result.succeed(void used.run(at, at, id)))
    }),
    delete: Effect.fn("PrebuildRepo.delete")(function* (id) {
      yield* write("deletePrebuild", () => Result.succeed(void remove.run(id)))
    })
  })
}

/** The prebuilds table, on the store's connection. */
export const layer: Layer.Layer<PrebuildRepo, StoreError, SqliteDatabase> = Layer.effect(
  PrebuildRepo,
  Effect.gen(function* () {
    const { db, transactions } = yield* SqliteDatabase
    return yield* Effect.try({
      try: () => prebuildsTable(db, transactions),
      catch: (cause) => new StoreError({ operation: "openPrebuilds", detail: sqliteDetail(cause) })
    })
  })
)
