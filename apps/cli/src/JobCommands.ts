import type { JobView } from "@prbox/protocol"
import { Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ExitCode, printJson } from "./Exit.ts"
import { table } from "./Format.ts"
import { followFlag, idArgument, json, needsDaemon, out, resolveId } from "./Params.ts"

/** `prbox jobs` and `prbox job`: background commands started with `prbox exec --background`. */

const time = (at: number | null) => (at === null ? "-" : new Date(at).toISOString().slice(0, 19).replace("T", " "))

const outcome = (job: JobView) => (job.exitCode === null ? job.status : `${job.status} (${job.exitCode})`)

const jobs = Command.make(
  "jobs",
  { id: idArgument, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const list = yield* client.listJobs(view.id)
      if (config.json) return printJson(list)
      if (list.length === 0) return yield* out(`no jobs in ${view.id}`)
      yield* out(
        table(
          ["JOB", "STATUS", "STARTED", "ENDED", "OUTPUT", "COMMAND"],
          list.map((job) => [
            job.jobId,
            outcome(job),
            time(job.startedAt),
            time(job.endedAt),
            `${job.outputBytes} B`,
            job.argv.join(" ").slice(0, 60)
          ])
        )
      )
    })
  )
).pipe(Command.withDescription("List a sandbox's background jobs (`prbox exec --background`), newest last."))

const job = Command.make(
  "job",
  {
    id: idArgument,
    jobId: Argument.String("job-id").pipe(Argument.withDescription("the job's id (j-...), from `prbox jobs`")),
    follow: followFlag("print output as it comes until the job ends, then exit with its exit code"),
    kill: Flag.Boolean("kill").pipe(Flag.withDescription("kill the job (and its children)"), Flag.withDefault(false)),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      if (config.kill) {
        const killed = yield* client.killJob(view.id, config.jobId)
        return config.json ? printJson(killed) : yield* out(`${killed.jobId}: ${outcome(killed)}`)
      }
      let offset = 0
      let delay = 0
      for (;;) {
        const chunk = yield* client.readJob(view.id, config.jobId, { offset })
        if (config.json && !config.follow) return printJson(chunk)
        if (config.json) printJson(chunk)
        else process.stdout.write(chunk.output)
        offset = chunk.nextOffset
        const ended = chunk.job.status !== "running"
        if (!config.follow || (ended && !chunk.more)) {
          if (config.follow) process.exitCode = chunk.job.exitCode ?? ExitCode.other
          return
        }
        // Backoff while the job prints nothing: from 100 ms up to 2 s between reads.
        if (chunk.more || chunk.output.length > 0) delay = 0
        else {
          delay = Math.min(2000, Math.max(100, delay * 1.5))
          yield* Effect.sleep(delay)
        }
      }
    })
  )
).pipe(
  Command.withDescription(
    [
      "Print a background job's output and status: prbox job <id> <jobId> [-f] [--kill].",
      "-f follows it to its end and exits with its exit code; a job whose early output was dropped",
      "(only the last 8 MiB are kept) resumes at the first byte still kept."
    ].join("\n")
  )
)

export const jobCommands = [jobs, job] as const
