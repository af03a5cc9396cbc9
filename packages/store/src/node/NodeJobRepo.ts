import type { SandboxId } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Effect, Layer, Result, Schema } from "effect"
import { JobRepo, type JobRow } from "../JobRepo.ts"
import { RowDecodeError, StoreError } from "../SandboxRepo.ts"
import { sqliteDetail } from "./OpenDatabase.ts"
import { SqliteDatabase } from "./SqliteDatabase.ts"
import type { Transactions } from "./Transactions.ts"

interface RawJob {
  readonly job_id: string
  readonly sandbox_id: string
  readonly argv: string
  readonly status: string
  readonly exit_code: number | null
  readonly started_at: number
  readonly ended_at: number | null
}

const COLUMNS = "job_id, sandbox_id, argv, status, exit_code, started_at, ended_at"

const StoredJob = Schema.Struct({
  argv: Schema.fromJsonString(Schema.Array(Schema.String)),
  status: Schema.Literals(["running", "exited", "timed-out", "killed", "lost"])
})
const decodeStored = Schema.decodeUnknownResult(StoredJob)

const toJob = (raw: RawJob): Result.Result<JobRow, RowDecodeError> =>
  Result.match(decodeStored({ argv: raw.argv, status: raw.status }), {
    onFailure: (error) =>
      Result.fail(new RowDecodeError({ operation: "job.decode", rowId: raw.job_id, detail: error.message })),
    onSuccess: ({ argv, status }) =>
      Result.succeed({
        jobId: raw.job_id,
        sandboxId: raw.sandbox_id as SandboxId,
        argv,
        status,
        exitCode: raw.exit_code,
        startedAt: raw.started_at,
        endedAt: raw.ended_at
      })
  })

/** The jobs table's statements and the repository on them; marks the running rows `lost` (at `openedAt`). */
const jobsTable = (db: Database.Database, { run, write }: Transactions, openedAt: number) => {
  const insert = db.prepare<[string, string, string, string, number | null, number, number | null]>(
    `INSERT INTO jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  const end = db.prepare<[string, number | null, number, string]>(
    "UPDATE jobs SET status = ?, exit_code = ?, ended_at = ? WHERE job_id = ? AND status = 'running'"
  )
  const listOf = db.prepare<[string], RawJob>(
    `SELECT ${COLUMNS} FROM jobs WHERE sandbox_id = ? ORDER BY started_at, job_id`
  )
  const get = db.prepare<[string, string], RawJob>(`SELECT ${COLUMNS} FROM jobs WHERE sandbox_id = ? AND job_id = ?`)
  db.prepare<[number]>("UPDATE jobs SET status = 'lost', ended_at = ? WHERE status = 'running'").run(openedAt)

  return JobRepo.of({
    insert: Effect.fn("JobRepo.insert")(function* (row) {
      yield* write("insertJob", () =>
        Result.succeed(
          void insert.run(
            row.jobId,
            row.sandboxId,
            JSON.stringify(row.argv),
            row.status,
            row.exitCode,
            row.startedAt,
            row.endedAt
          )
        )
      )
    }),
    end: Effect.fn("JobRepo.end")(function* (jobId, { status, exitCode, endedAt }) {
      yield* write("endJob", () => Result.succeed(void end.run(status, exitCode, endedAt, jobId)))
    }),
    listOf: Effect.fn("JobRepo.listOf")(function* (sandboxId) {
      return yield* run("listJobs", () => Result.all(listOf.all(sandboxId).map(toJob)))
    }),
    get: Effect.fn("JobRepo.get")(function* (sandboxId, jobId) {
      return yield* run("getJob", () => {
        const raw = get.get(sandboxId, jobId)
        return raw === undefined ? Result.succeed(undefined) : toJob(raw)
      })
    })
  })
}

/** Deletes a sandbox's jobs; synchronous, for the sandbox row delete's transaction (NodeSandboxRepo). */
export const jobsDeleter = (db: Database.Database) => {
  const deleteOf = db.prepare<[string]>("DELETE FROM jobs WHERE sandbox_id = ?")
  return (id: SandboxId) => void deleteOf.run(id)
}

/**
 * The jobs table, on the store's connection. Built when the store opens,
 * which is when the jobs a previous daemon left running become `lost`.
 */
export const layer: Layer.Layer<JobRepo, StoreError, SqliteDatabase> = Layer.effect(
  JobRepo,
  Effect.gen(function* () {
    const { db, transactions } = yield* SqliteDatabase
    return yield* Effect.try({
      try: () => jobsTable(db, transactions, Date.now()),
      catch: (cause) => new StoreError({ operation: "markLostJobs", detail: sqliteDetail(cause) })
    })
  })
)
