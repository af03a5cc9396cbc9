import { restartRefusal, type Sandbox, SandboxConflict, type SandboxId, statePaths } from "@prbox/domain"
import { type PullRequestRef, Workspaces } from "@prbox/git"
import { Cause, Effect, Option } from "effect"
import { readyDetail } from "./CodeServerSpec.ts"
import { Config, type PrboxConfig } from "./Config.ts"
import { ContainerRuntime } from "./ContainerRuntime.ts"
import { StopWon, safeReason } from "./Errors.ts"
import { Lifecycle } from "./Lifecycle.ts"
import { type Ownership, userSpec } from "./Ownership.ts"
import { makeRunHook } from "./SandboxHooks.ts"
import { makeSetup } from "./Setup.ts"
import { makeStartContainer } from "./StartContainer.ts"

export interface RestartOptions {
  /** The container was removed to be made again (`prbox rebuild`). */
  readonly rebuild: boolean
}

/** A setup's outcome until it ends: what a reused container shows when it never did. */
const SETUP_INTERRUPTED = "setup did not finish (interrupted)"

/**
 * The workers that take a sandbox from admitted to `running`: a create
 * (clone, image, container, health, ready hook, setup) or a restart (container,
 * health, ready hook, and setup when its container had to be created again).
 * They run in the lifecycle's scope, past the request.
 */
export const makeWorkers = (ownership: Ownership, extraLabels: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const runtime = yield* ContainerRuntime
    const workspaces = yield* Workspaces
    const lifecycle = yield* Lifecycle
    const paths = statePaths((yield* Config).home)
    const container = yield* makeStartContainer(ownership, extraLabels)
    const setup = yield* makeSetup
    const runHook = yield* makeRunHook
    const { advance, getRow, progress } = lifecycle

    /**
     * Ends a worker: a stop ends it quietly, an interruption goes through, and
     * any other failure or defect puts the row in `error` with a safe reason.
     */
    const supervise = <E>(row: Sandbox, work: Effect.Effect<void, E>): Effect.Effect<void> =>
      Effect.catchCause(work, (cause) => {
        if (Cause.hasInterrupts(cause)) return Effect.interrupt
        const error = Cause.findErrorOption(cause)
        if (Option.isSome(error) && error.value instanceof StopWon) return Effect.void
        // A defect is a bug: its cause goes to the log, the row gets a safe reason.
        const record = Option.isSome(error)
          ? advance(row.id, "error", { error: safeReason(error.value) })
          : Effect.logError("sandbox worker died", cause).pipe(
              Effect.andThen(advance(row.id, "error", { error: safeReason(Cause.squash(cause)) }))
            )
        return Effect.ignore(record)
      })

    /**
     * code-server never answered: the worker stops the container it started
     * (which keeps its output for `docker logs`) before the row goes to
     * `error`. A stop Docker does not confirm is left to reconcile, which
     * stops an ended row's running container.
     */
    const stopUnanswered = (row: Sandbox, containerId: string) =>
      lifecycle.withContainer(row.id, runtime.stop(containerId)).pipe(
        Effect.catch((error) => progress(row, `could not stop its container: ${error.message}`)),
        Effect.ignore
      )

    /**
     * The create-time steps, on a container this start created. The row says
     * "did not finish" until they end, so a setup cut short (a stop, a crash)
     * is not mistaken for a done one when the container is reused.
     */
    const runSetup = Effect.fn("SandboxService.runSetup")(function* (
      row: Sandbox,
      containerId: string,
      config: PrboxConfig
    ) {
      yield* advance(row.id, "starting", { setupError: SETUP_INTERRUPTED })
      const user = yield* ownership.workspaceUser(row.workspacePath ?? "/")
      return yield* setup(row, containerId, userSpec(user), config)
    })

    /**
     * From a started container to `running`: health, the ready hook, and the
     * setup when the container is new. A failed setup is recorded on the row
     * (`setupError`), not fatal; a reused container keeps its setup outcome.
     */
    const becomeReady = Effect.fn("SandboxService.becomeReady")(function* (id: SandboxId, config: PrboxConfig) {
      const workspacePath = (yield* getRow(id)).workspacePath
      if (workspacePath !== null) yield* ownership.prepare(id, workspacePath)
      const { row, containerId, hostPort, movedFrom, created } = yield* container.start(id, config)
      yield* container.waitHealthy(row, hostPort, config).pipe(Effect.tapError(() => stopUnanswered(row, containerId)))
      yield* runHook(row, "onSandboxReady", config)
      const setupError = created ? { setupError: yield* runSetup(row, containerId, config) } : {}
      yield* advance(id, "running", { detail: readyDetail(hostPort, movedFrom), ...setupError })
    })

    const createWorker = (row: Sandbox, ref: PullRequestRef, config: PrboxConfig) =>
      supervise(
        row,
        Effect.gen(function* () {
          const cloning = yield* advance(row.id, "cloning")
          const onProgress = (line: string) => progress(cloning, line).pipe(Effect.ignore)
          const fetched = yield* workspaces.fetchPullRequest(ref, { onProgress })
          const workspacePath = paths.workspace(row.id)
          yield* workspaces.createWorkspace({
            mirrorPath: fetched.mirrorPath,
            commit: fetched.commit,
            destination: workspacePath,
            originUrl: ref.remoteUrl,
            branchName: `pr-${ref.pullRequest}`,
            onProgress
          })
          const starting = yield* advance(row.id, "starting", {
            workspacePath,
            sourceCommit: fetched.commit,
            sourceBranch: `pr-${ref.pullRequest}`
          })
          yield* runtime.ensureImage(config.image, (line) => progress(starting, line).pipe(Effect.ignore))
          yield* becomeReady(row.id, config)
        })
      )

    /**
     * A restart; with `rebuild` (the row's container was removed for it), the
     * one that makes the new container, which then runs the create-time steps.
     */
    const restartWorker = (row: Sandbox, config: PrboxConfig, options: RestartOptions) =>
      supervise(
        row,
        Effect.andThen(
          options.rebuild ? progress(row, "rebuilding: a new container on the kept workspace") : Effect.void,
          becomeReady(row.id, config)
        )
      )

    /** Moves a restartable row to `starting` and hands it to a worker (the caller holds admission). */
    const admitRestart = Effect.fn("SandboxService.admitRestart")(function* (
      row: Sandbox,
      config: PrboxConfig,
      options: RestartOptions = { rebuild: false }
    ) {
      const refusal = restartRefusal(row)
      if (refusal !== undefined) return yield* new SandboxConflict({ id: row.id, reason: refusal })
      const starting = yield* lifecycle.serialized(
        lifecycle.writeStatus(row.id, "starting", { error: null, stoppedAt: null })
      )
      yield* lifecycle.spawnWorker(row.id, restartWorker(starting, config, options))
      return starting
    })

    /** Hands a freshly inserted row to its create worker (the caller holds admission). */
    const spawnCreate = (row: Sandbox, ref: PullRequestRef, config: PrboxConfig) =>
      lifecycle.spawnWorker(row.id, createWorker(row, ref, config))

    return { admitRestart, spawnCreate, runHook }
  })

export type Workers = Effect.Success<ReturnType<typeof makeWorkers>>
