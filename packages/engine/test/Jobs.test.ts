import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Effect, Schedule } from "effect"
import { inject } from "vitest"
import { type JobInfo, SandboxJobs, SandboxService } from "../src/index.ts"
import { engineLayer } from "./engine-layer.ts"
import { bounded, fixture, healthzTag, openRunning, withEngine } from "./harness.ts"

const MINUTE = 60_000

/** Polls the job until it is no longer running (the latch is the job's own end). */
const ended = (id: SandboxId, jobId: string) =>
  Effect.flatMap(SandboxJobs, (jobs) =>
    jobs.read(id, jobId, { offset: 0, maxBytes: 1 }).pipe(
      Effect.map((chunk) => chunk.job),
      Effect.repeat({ schedule: Schedule.spaced(50), until: (job: JobInfo) => job.status !== "running" })
    )
  )

/** The job's command is running in the container: `ps` sees its marker. */
const running = (id: SandboxId, marker: string) =>
  Effect.flatMap(SandboxService, (sandboxes) =>
    sandboxes
      .exec(id, ["sh", "-c", 'ps -o args | grep -c -F -- "$1$2" || true', "probe", "sleep ", marker], {
        timeoutMs: 10_000,
        maxOutputBytes: 1024
      })
      .pipe(
        Effect.map((outcome) => Number(outcome.stdout.trim())),
        Effect.repeat({ schedule: Schedule.spaced(50), until: (count) => count >= 1 })
      )
  )

describe("background jobs (real Docker)", () => {
  it.live("a job's output reads in three chunks, then its exit code", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const jobs = yield* SandboxJobs
        const { id } = yield* openRunning(remote.path, 1)
        const started = yield* jobs.start(id, ["sh", "-c", "printf 0123456789abcdefghijKLMNOPQRST; exit 3"], {
          timeoutMs: MINUTE
        })
        assert.match(started.jobId, /^j-[0-9a-f]{8}$/)
        assert.strictEqual((yield* ended(id, started.jobId)).exitCode, 3)
        const chunks: Array<string> = []
        let offset = 0
        for (let read = 0; read < 3; read++) {
          const chunk = yield* jobs.read(id, started.jobId, { offset, maxBytes: 10 })
          assert.strictEqual(chunk.offset, offset)
          chunks.push(chunk.output)
          offset = chunk.nextOffset
          assert.strictEqual(chunk.more, read < 2)
        }
        assert.deepStrictEqual(chunks, ["0123456789", "abcdefghij", "KLMNOPQRST"])
        const [listed] = yield* jobs.list(id)
        assert.deepStrictEqual(
          { status: listed?.status, exitCode: listed?.exitCode, outputBytes: listed?.outputBytes },
          { status: "exited", exitCode: 3, outputBytes: 30 }
        )
        const missing = yield* Effect.flip(jobs.read(id, "j-00000000", { offset: 0, maxBytes: 10 }))
        assert.strictEqual(missing._tag, "JobNotFound")
      })
    ).pipe(bounded("the job did not end", 120))
  )

  it.live("kill ends a job as killed; stopping the sandbox kills the rest", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const jobs = yield* SandboxJobs
        const sandboxes = yield* SandboxService
        const { id } = yield* openRunning(remote.path, 1)
        const first = yield* jobs.start(id, ["sleep", "1000.81"], { timeoutMs: 10 * MINUTE })
        const second = yield* jobs.start(id, ["sh", "-c", "sleep 1000.82; echo never"], { timeoutMs: 10 * MINUTE })
        yield* running(id, "1000.81")
        const killed = yield* jobs.kill(id, first.jobId)
        assert.strictEqual(killed.status, "killed")
        yield* running(id, "1000.82")
        yield* sandboxes.stop(id)
        const stopped = yield* ended(id, second.jobId)
        assert.deepStrictEqual(
          { status: stopped.status, exitCode: stopped.exitCode },
          { status: "killed", exitCode: null }
        )
      })
    ).pipe(bounded("the jobs were not killed", 120))
  )

  it.live("a cwd outside the workspace is refused; one inside is where the command runs", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const jobs = yield* SandboxJobs
        const sandboxes = yield* SandboxService
        const { id } = yield* openRunning(remote.path, 1)
        const exec = (cwd: string) => sandboxes.exec(id, ["pwd"], { cwd, timeoutMs: MINUTE, maxOutputBytes: 1024 })
        yield* sandboxes.exec(id, ["sh", "-c", "mkdir -p sub && ln -s /etc out"], {
          timeoutMs: MINUTE,
          maxOutputBytes: 1024
        })
        assert.match((yield* exec("sub")).stdout, /\/sub\n$/)
        for (const cwd of ["../", "out", "missing", "/etc"]) {
          const refused = yield* Effect.flip(exec(cwd))
          assert.strictEqual(refused._tag, "InvalidPath", cwd)
        }
        const job = yield* Effect.flip(jobs.start(id, ["pwd"], { cwd: "out", timeoutMs: MINUTE }))
        assert.strictEqual(job._tag, "InvalidPath")
      })
    ).pipe(bounded("the execs did not end", 120))
  )

  it.live("a job running when the daemon stops is lost when it starts again", () =>
    Effect.gen(function* () {
      const { home, remote } = yield* fixture
      const engine = () => engineLayer({ home, runId: inject("testRunId"), config: { image: healthzTag } })
      const { id, jobId } = yield* Effect.gen(function* () {
        const { id } = yield* openRunning(remote.path, 1)
        const job = yield* (yield* SandboxJobs).start(id, ["sleep", "1000.9"], { timeoutMs: 10 * MINUTE })
        return { id, jobId: job.jobId }
      }).pipe(Effect.provide(engine()))
      const [after] = yield* Effect.flatMap(SandboxJobs, (jobs) => jobs.list(id)).pipe(Effect.provide(engine()))
      assert.deepStrictEqual({ jobId: after?.jobId, status: after?.status }, { jobId, status: "lost" })
    }).pipe(Effect.scoped, bounded("the engine did not restart", 120))
  )
})
