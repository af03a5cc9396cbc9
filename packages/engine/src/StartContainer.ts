import type { Sandbox, SandboxId } from "@prbox/domain"
import { Clock, Effect } from "effect"
import { codeServerSpec } from "./CodeServerSpec.ts"
import { Config, type PrboxConfig } from "./Config.ts"
import { ContainerRuntime } from "./ContainerRuntime.ts"
import { SetupFailed } from "./Errors.ts"
import { Lifecycle } from "./Lifecycle.ts"
import { type Ownership, userSpec } from "./Ownership.ts"

/** From a prepared workspace to a started container, then to code-server answering. */
export const makeStartContainer = (ownership: Ownership, extraLabels: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const runtime = yield* ContainerRuntime
    const lifecycle = yield* Lifecycle
    const engineHome = (yield* Config).home
    const { failIfStopRequested, getRow, writeStatus, progress } = lifecycle

    /**
     * Creates (or reuses) and starts the container. The whole step holds the
     * sandbox (lifecycle, then container permit) and cannot be interrupted, so
     * a container that exists is always recorded on the row; the stop request
     * is checked before create, after create and after start. `created` says
     * whether this start made a new container (its create-time steps are due).
     */
    const start = Effect.fn("SandboxService.startContainer")(function* (id: SandboxId, config: PrboxConfig) {
      return yield* lifecycle.holdSandbox(
        id,
        Effect.uninterruptible(
          Effect.gen(function* () {
            yield* failIfStopRequested(id)
            const row = yield* getRow(id)
            const workspacePath = row.workspacePath
            if (workspacePath === null) return yield* new SetupFailed({ reason: "the sandbox has no workspace" })
            let containerId = row.containerId
            if (containerId !== null && (yield* runtime.state(containerId))._tag === "Absent") containerId = null
            const created = containerId === null
            if (containerId === null) {
              const user = userSpec(yield* ownership.workspaceUser(workspacePath))
              const homePath = ownership.homeOf(id)
              containerId = yield* runtime.provision(
                codeServerSpec({ row, config, user, homePath, engineHome, extraLabels })
              )
              yield* writeStatus(id, "starting", { containerId })
              yield* failIfStopRequested(id)
            }
            const hostPort = yield* runtime.start(containerId)
            const started = yield* writeStatus(id, "starting", { hostPort })
            yield* failIfStopRequested(id)
            return { row: started, containerId, hostPort, created }
          })
        )
      )
    })

    const waitHealthy = Effect.fn("SandboxService.waitHealthy")(function* (
      row: Sandbox,
      hostPort: number,
      config: PrboxConfig
    ) {
      yield* progress(row, "waiting for code-server to answer")
      const deadline = (yield* Clock.currentTimeMillis) + config.healthTimeoutSeconds * 1000
      // Probe often at first (code-server answers within a second), then back off.
      let pause = 20
      while (true) {
        const probe = yield* Effect.result(runtime.health(hostPort))
        if (probe._tag === "Success") return
        if ((yield* Clock.currentTimeMillis) >= deadline) {
          return yield* new SetupFailed({
            reason: `code-server did not answer within ${config.healthTimeoutSeconds} s`
          })
        }
        yield* Effect.sleep(pause)
        pause = Math.min(pause * 1.5, 500)
      }
    })

    return { start, waitHealthy }
  })

export type StartContainer = Effect.Success<ReturnType<typeof makeStartContainer>>
