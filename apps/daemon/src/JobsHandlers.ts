import type { JobInfo } from "@prbox/engine"
import { SandboxJobs } from "@prbox/engine"
import { DEFAULT_READ_BYTES, type JobView, MAX_EXEC_TIMEOUT_MS, PrboxApi } from "@prbox/protocol"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { api } from "./Mapping.ts"

const toJobView = (job: JobInfo): JobView => ({ ...job, argv: [...job.argv] })

/** Background jobs of a running sandbox, on the engine's SandboxJobs (which owns every check). */
export const JobsHandlers = HttpApiBuilder.group(PrboxApi, "jobs", (handlers) =>
  Effect.gen(function* () {
    const jobs = yield* SandboxJobs
    return handlers
      .handle("start", ({ params, payload }) =>
        api(
          jobs.start(params.id, payload.argv, {
            // A background job is for long commands: the longest deadline unless asked for less.
            timeoutMs: payload.timeoutMs ?? MAX_EXEC_TIMEOUT_MS,
            ...(payload.cwd === undefined ? {} : { cwd: payload.cwd }),
            ...(payload.env === undefined ? {} : { env: payload.env })
          })
        ).pipe(Effect.map(toJobView))
      )
      .handle("list", ({ params }) => api(jobs.list(params.id)).pipe(Effect.map((list) => list.map(toJobView))))
      .handle("read", ({ params, query }) =>
        api(
          jobs.read(params.id, params.jobId, {
            offset: query.offset ?? 0,
            maxBytes: query.maxBytes ?? DEFAULT_READ_BYTES
          })
        ).pipe(Effect.map((chunk) => ({ ...chunk, job: toJobView(chunk.job) })))
      )
      .handle("kill", ({ params }) => api(jobs.kill(params.id, params.jobId)).pipe(Effect.map(toJobView)))
  })
)
