import { PrboxApi } from "@prbox/protocol"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"

// TODO(i13-exec): implement on SandboxJobs.
const notYet = () => Effect.die("jobs: not yet (i13-exec)")

/** Background jobs of a running sandbox, on the engine's SandboxJobs. */
export const JobsLive = HttpApiBuilder.group(PrboxApi, "jobs", (handlers) =>
  Effect.succeed(handlers.handle("start", notYet).handle("list", notYet).handle("read", notYet).handle("kill", notYet))
)
