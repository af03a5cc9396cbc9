import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { JobRow } from "../src/JobRepo.ts"
import { databaseIn, freshStateDir, newSandbox, openStore, rawDatabase, sandboxId } from "./support.ts"

const job = (n: number, sandbox: number, overrides: Partial<JobRow> = {}): JobRow => ({
  jobId: `j-0000000${n}`,
  sandboxId: sandboxId(sandbox),
  argv: ["sh", "-c", `echo ${n}`],
  status: "running",
  exitCode: null,
  startedAt: 1000 + n,
  endedAt: null,
  ...overrides
})

describe("jobs", () => {
  it.effect("a job reads back; its first end is kept; jobs are listed by sandbox, oldest first", () =>
    Effect.gen(function* () {
      const { jobs } = yield* openStore(yield* freshStateDir)
      yield* jobs.insert(job(2, 1))
      yield* jobs.insert(job(1, 1))
      yield* jobs.insert(job(3, 2))
      yield* jobs.end("j-00000002", { status: "exited", exitCode: 3, endedAt: 2000 })
      yield* jobs.end("j-00000002", { status: "killed", exitCode: null, endedAt: 3000 })
      assert.deepStrictEqual(yield* jobs.get(sandboxId(1), "j-00000002"), {
        ...job(2, 1),
        status: "exited",
        exitCode: 3,
        endedAt: 2000
      })
      assert.strictEqual(yield* jobs.get(sandboxId(2), "j-00000002"), undefined)
      assert.deepStrictEqual(
        (yield* jobs.listOf(sandboxId(1))).map((row) => row.jobId),
        ["j-00000001", "j-00000002"]
      )
    })
  )

  it.effect("reopening the store marks the jobs left running lost, and only those", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { jobs } = yield* openStore(stateDir)
          yield* jobs.insert(job(1, 1))
          yield* jobs.insert(job(2, 1, { status: "exited", exitCode: 0, endedAt: 1500 }))
        })
      )
      const { jobs } = yield* openStore(stateDir)
      const [lost, exited] = yield* jobs.listOf(sandboxId(1))
      assert.strictEqual(lost?.status, "lost")
      assert.isNotNull(lost?.endedAt)
      assert.deepStrictEqual(exited, job(2, 1, { status: "exited", exitCode: 0, endedAt: 1500 }))
    })
  )

  it.effect("deleting a sandbox deletes its jobs", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const { repo, jobs } = yield* openStore(stateDir)
      yield* repo.insert(newSandbox(1))
      yield* jobs.insert(job(1, 1))
      yield* jobs.insert(job(2, 2))
      yield* repo.delete(sandboxId(1))
      const raw = yield* rawDatabase(databaseIn(stateDir), { readonly: true })
      assert.deepStrictEqual(raw.prepare("SELECT job_id FROM jobs").pluck().all(), ["j-00000002"])
    })
  )
})
