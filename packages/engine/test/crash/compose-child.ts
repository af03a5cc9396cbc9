/**
 * The engine in a process of its own, opening a Docker Compose PR; the
 * parent kills it with SIGKILL while Compose's `up` holds (a docker-compose
 * on PATH that latches once the containers are made). Never returns.
 *
 * Usage: node compose-child.ts, with PRBOX_HOME, PRBOX_CRASH_REMOTE and
 * PRBOX_CRASH_RUN_ID in the environment.
 */
import { Effect } from "effect"
import { SandboxService } from "../../src/index.ts"
import { engineLayer } from "../engine-layer.ts"
import { CHILD_ENV, PULL_REQUEST } from "./phases.ts"

const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set`)
  return value
}

const open = Effect.gen(function* () {
  const sandboxes = yield* SandboxService
  yield* sandboxes.open({ input: env(CHILD_ENV.remote), pr: PULL_REQUEST })
  return yield* Effect.never
})

Effect.runFork(
  open.pipe(Effect.provide(engineLayer({ home: env(CHILD_ENV.home), runId: env(CHILD_ENV.runId), config: {} })))
)
