import { randomBytes } from "node:crypto"
import { type JobOutputBuffer, makeJobOutput, type SandboxId } from "@prbox/domain"
import { type JobEnd, JobRepo, type JobRow, SandboxRepo } from "@prbox/store"
import { Clock, Deferred, Effect, Layer, Schedule, Stream } from "effect"
import { ContainerRuntime, type RunningCommand } from "../../ContainerRuntime.ts"
import { mapStoreErrors } from "../../Errors.ts"
import { commandOptions, cwdRefusal } from "../../exec/CommandPlace.ts"
import { ExecTargets } from "../../exec/ExecTarget.ts"
import { Lifecycle } from "../../Lifecycle.ts"
import { JobNotFound } from "../Errors.ts"
import { type JobInfo, SandboxJobs } from "../SandboxJobs.ts"

/** How often a sandbox with a running job is touched, so gc never counts it idle. */
const ACTIVITY_EVERY = "30 seconds"
/** Ended jobs whose output stays readable (the oldest ended are forgotten first; their rows stay). */
const ENDED_KEPT = 32
/** How long a kill waits for the job to be seen ending. */
const KILL_CONFIRMED_WITHIN = "15 seconds"

/** A job this daemon started: its row as last written, its output, its process. */
interface LiveJob {
  row: JobRow
  readonly output: JobOutputBuffer
  readonly command: RunningCommand
  killRequested: boolean
  readonly ended: Deferred.Deferred<void>
}

const newJobId = (): string => `j-${randomBytes(4).toString("hex")}`

/**
 * SandboxJobs on the container runtime's `spawn`: output in this daemon's
 * memory (the last JOB_OUTPUT_KEPT bytes, never logged), rows in the store's
 * JobRepo. A sandbox that leaves `running` (stop, restart, rebuild, delete:
 * every one of them writes a status change, seen on Lifecycle.events) has its
 * running jobs killed. Needs a scope: its watchers live as long as it does.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const jobsRepo = yield* JobRepo
  const repo = yield* SandboxRepo
  const lifecycle = yield* Lifecycle
  const execTarget = yield* ExecTargets
  const live = new Map<string, LiveJob>()
  const scope = yield* Effect.scope

  const forgetOldEnded = () => {
    const ended = [...live.values()].filter((job) => job.row.status !== "running")
    ended.sort((a, b) => (a.row.endedAt ?? 0) - (b.row.endedAt ?? 0))
    for (const job of ended.slice(0, Math.max(0, ended.length - ENDED_KEPT))) live.delete(job.row.jobId)
  }

  const info = (row: JobRow): JobInfo => ({ ...row, outputBytes: live.get(row.jobId)?.output.total() ?? 0 })

  /** Records how a job ended, once, when its process ends. */
  const watch = (job: LiveJob) =>
    job.command.exit.pipe(
      Effect.map(
        (ended): Omit<JobEnd, "endedAt"> =>
          ended.timedOut
            ? { status: "timed-out", exitCode: null }
            : job.killRequested || ended.killed
              ? { status: "killed", exitCode: null }
              : { status: "exited", exitCode: ended.exitCode }
      ),
      // A process whose end could not be observed: killed if asked to, else its outcome is unknown.
      Effect.catch(() =>
        Effect.succeed<Omit<JobEnd, "endedAt">>({ status: job.killRequested ? "killed" : "lost", exitCode: null })
      ),
      Effect.flatMap((end) =>
        Effect.flatMap(Clock.currentTimeMillis, (endedAt) => {
          job.row = { ...job.row, ...end, endedAt }
          return jobsRepo.end(job.row.jobId, { ...end, endedAt })
        })
      ),
      Effect.catch((error) => Effect.logWarning("could not record a job's end", error.message)),
      Effect.ensuring(Effect.andThen(Deferred.succeed(job.ended, undefined), Effect.sync(forgetOldEnded))),
      Effect.forkIn(scope)
    )

  const killJob = (job: LiveJob) =>
    Effect.gen(function* () {
      if (job.row.status !== "running") return
      job.killRequested = true
      yield* job.command.kill
      yield* Deferred.await(job.ended).pipe(Effect.timeoutOption(KILL_CONFIRMED_WITHIN))
    })

  const runningOf = (id: SandboxId) =>
    [...live.values()].filter((job) => job.row.sandboxId === id && job.row.status === "running")

  // Jobs end with their sandbox: any status but `running` kills them.
  yield* lifecycle.events.pipe(
    Stream.runForEach((event) =>
      event._tag === "StatusChanged" && event.status !== "running"
        ? Effect.forEach(runningOf(event.sandboxId), killJob, { concurrency: "unbounded", discard: true })
        : Effect.void
    ),
    Effect.forkScoped
  )

  // A running job is activity: its sandbox is touched while it runs.
  yield* Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const sandboxes = new Set(
      [...live.values()].filter((job) => job.row.status === "running").map((job) => job.row.sandboxId)
    )
    yield* Effect.forEach(sandboxes, (id) => repo.touch(id, now).pipe(Effect.ignore), { discard: true })
  }).pipe(Effect.repeat(Schedule.spaced(ACTIVITY_EVERY)), Effect.forkScoped)

  const findJob = Effect.fnUntraced(function* (id: SandboxId, jobId: string) {
    yield* lifecycle.getRow(id)
    const row = live.get(jobId)?.row ?? (yield* jobsRepo.get(id, jobId))
    if (row === undefined || row.sandboxId !== id) return yield* new JobNotFound({ id, jobId })
    return row
  })

  return SandboxJobs.of({
    start: Effect.fn("SandboxJobs.start")(function* (id, argv, options) {
      const target = yield* execTarget(id, "a background job")
      const place = yield* commandOptions(target, options)
      const output = makeJobOutput()
      const command = yield* runtime
        .spawn(target.containerId, argv, place, output.add)
        .pipe(Effect.catchTag("CwdRefused", (error) => Effect.fail(cwdRefusal(target, options.cwd)(error))))
      const row: JobRow = {
        jobId: newJobId(),
        sandboxId: id,
        argv,
        status: "running",
        exitCode: null,
        startedAt: yield* Clock.currentTimeMillis,
        endedAt: null
      }
      const job: LiveJob = { row, output, command, killRequested: false, ended: yield* Deferred.make<void>() }
      // A job that cannot be recorded does not run.
      yield* jobsRepo.insert(row).pipe(Effect.tapError(() => command.kill))
      live.set(row.jobId, job)
      yield* watch(job)
      return info(row)
    }, mapStoreErrors("jobs.start")),
    read: Effect.fn("SandboxJobs.read")(function* (id, jobId, { offset, maxBytes }) {
      const row = yield* findJob(id, jobId)
      const output = live.get(jobId)?.output
      const slice =
        output === undefined ? { offset: 0, text: "", nextOffset: 0, more: false } : output.read(offset, maxBytes)
      return {
        job: info(row),
        offset: slice.offset,
        output: slice.text,
        nextOffset: slice.nextOffset,
        more: slice.more
      }
    }, mapStoreErrors("jobs.read")),
    list: Effect.fn("SandboxJobs.list")(function* (id) {
      yield* lifecycle.getRow(id)
      const rows = yield* jobsRepo.listOf(id)
      return rows.map((row) => info(live.get(row.jobId)?.row ?? row))
    }, mapStoreErrors("jobs.list")),
    kill: Effect.fn("SandboxJobs.kill")(function* (id, jobId) {
      const row = yield* findJob(id, jobId)
      const job = live.get(jobId)
      if (job === undefined) return info(row)
      yield* killJob(job)
      return info(job.row)
    }, mapStoreErrors("jobs.kill"))
  })
})

export const layer = Layer.effect(SandboxJobs, make).pipe(Layer.provide(ExecTargets.layer))
