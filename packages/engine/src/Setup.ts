import type { Sandbox } from "@prbox/domain"
import { Effect } from "effect"
import { CONTAINER_WORKSPACE } from "./CodeServerSpec.ts"
import type { PrboxConfig } from "./Config.ts"
import { ContainerRuntime } from "./ContainerRuntime.ts"
import { mapStoreErrors, SetupFailed } from "./Errors.ts"
import { Lifecycle } from "./Lifecycle.ts"

const SETUP_TIMEOUT_MS = 30 * 60_000
const SETUP_OUTPUT_BYTES = 1024 * 1024

/**
 * The user's setup commands, once per created container, in its workspace.
 * The first failed step ends them, but not the sandbox: it is returned (the
 * row's `setupError`) so the user can get in and fix it. Null when every step
 * succeeded. A Docker failure is not a step's failure and still fails.
 */
export const makeSetup = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const { emit, progress } = yield* Lifecycle

  return Effect.fn("SandboxService.setup")(function* (
    row: Sandbox,
    containerId: string,
    user: string,
    config: PrboxConfig
  ) {
    const steps = Effect.forEach(config.setupCommands, (command, index) =>
      Effect.gen(function* () {
        const step = `[${index + 1}/${config.setupCommands.length}]`
        yield* progress(row, `${step} ${command}`)
        const result = yield* runtime.exec(containerId, ["sh", "-lc", command], {
          user,
          cwd: CONTAINER_WORKSPACE,
          timeoutMs: SETUP_TIMEOUT_MS,
          maxOutputBytes: SETUP_OUTPUT_BYTES
        })
        for (const line of result.output.split("\n").filter((l) => l.length > 0)) {
          yield* emit(row.id, row.status, `${step} ${line}`).pipe(mapStoreErrors("sandbox.log"))
        }
        if (result.timedOut) return yield* new SetupFailed({ reason: `setup ${step} timed out` })
        if (result.exitCode !== 0) {
          return yield* new SetupFailed({ reason: `setup ${step} failed with exit code ${result.exitCode}` })
        }
      })
    )
    return yield* steps.pipe(
      Effect.as(null),
      Effect.catchTag("SetupFailed", ({ reason }) => Effect.as(progress(row, `${reason}; setup ended there`), reason))
    )
  })
})
