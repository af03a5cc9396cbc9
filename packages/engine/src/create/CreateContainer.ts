import {
  type EnvironmentPlan,
  healthProbePause,
  isCodeServerListeningLine,
  mountsRefusal,
  previewUrlTemplate,
  type Sandbox,
  type SandboxId
} from "@prbox/domain"
import { Clock, Context, Deferred, Effect, Fiber, FileSystem, Layer } from "effect"
import { CodeServerHealth } from "../CodeServerHealth.ts"
import { codeServerSpec, portMovedLine, userMounts } from "../CodeServerSpec.ts"
import { ComposeCli } from "../ComposeCli.ts"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels, userSpec } from "../ContainerSpec.ts"
import { SetupFailed } from "../Errors.ts"
import { Installation } from "../Installation.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { PreviewAddress } from "../PreviewAddress.ts"
import type { CodeServerDistribution } from "../SandboxTools.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { ChoosePort } from "./ChoosePort.ts"
import { provisionCompose } from "./ProvisionCompose.ts"

/** A sandbox's error when its container stopped before code-server answered. */
const CONTAINER_EXITED = "code-server did not answer: its container exited"

/** Where an image's git may be: a checkout runs in the container only where one is. */
const GIT_PATHS = ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]

/**
 * A start before the workspace's files are written: the clone (its `.git`)
 * is there; the container's own git writes the files once it runs, or, in
 * an image without git, `checkoutHere` does before it first starts.
 */
export interface CheckoutAtStart<E> {
  readonly workspacePath: string
  readonly checkoutHere: Effect.Effect<void, E>
  /** Its files are copied in beside its start (a prebuilt workspace): not looked for at its create. */
  readonly filledBesideStart?: boolean
}

/** What a container is made from: the environment's plan and the code-server to mount (null: the image's own). */
export interface ContainerEnvironment {
  readonly plan: EnvironmentPlan
  readonly distribution: CodeServerDistribution | null
}

/** From a prepared workspace to a started container, then to code-server answering. */
const make = Effect.gen(function* () {
  const ownership = yield* Ownership
  const extraLabels = yield* ExtraLabels
  const runtime = yield* ContainerRuntime
  const health = yield* CodeServerHealth
  const lifecycle = yield* Lifecycle
  const engineHome = (yield* Config).home
  const install = (yield* Installation).id
  const previewPort = (yield* PreviewAddress).port
  const choosePort = yield* ChoosePort
  const composeDeps = { fs: yield* FileSystem.FileSystem, runtime, compose: yield* ComposeCli, home: engineHome }
  const { failIfStopRequested, getRow, writeStatus, progress } = lifecycle

  /**
   * prbox's code-server runs on the image's glibc: an image without it
   * (Alpine, busybox) is refused by name, before anything starts.
   */
  const requireGlibc = (containerId: string, plan: EnvironmentPlan, distribution: CodeServerDistribution | null) =>
    Effect.gen(function* () {
      if (distribution === null || (yield* runtime.hasPath(containerId, distribution.loader))) return
      yield* runtime.destroy(containerId, { keepFiles: true })
      return yield* new SetupFailed({
        reason: `image ${plan.image} has no glibc (${distribution.loader}): prbox's code-server needs a glibc-based image such as Debian, Ubuntu or the devcontainer base images`
      })
    })

  /**
   * The user's own mounts are folders of this machine: an engine that
   * cannot see them is refused before anything is made for the sandbox.
   */
  const refuseUnseenMounts = (config: PrboxConfig, plan: EnvironmentPlan) =>
    Effect.gen(function* () {
      const mounts = userMounts(config, plan)
      if (mounts.length === 0 || (yield* runtime.filesAt) === "host") return
      return yield* new SetupFailed({ reason: mountsRefusal(mounts.map((mount) => mount.source)) })
    })

  /**
   * Code-server must never run on an empty or wrong folder (an engine that
   * does not see the files it was told it sees, a copy that went astray):
   * the clone's `.git` must be in the container before anything starts.
   * The carried files stay for the next try.
   */
  const requireWorkspace = (containerId: string, plan: EnvironmentPlan) =>
    Effect.gen(function* () {
      if (yield* runtime.hasPath(containerId, `${plan.workspaceFolder}/.git`)) return
      yield* runtime.destroy(containerId, { keepFiles: true })
      return yield* new SetupFailed({
        reason: `the workspace is not in the container (${plan.workspaceFolder}/.git is missing): \`prbox doctor\` shows whether the engine sees this machine's files`
      })
    })

  /** Whether a created container's image has git (where images keep it). */
  const hasGit = (containerId: string) =>
    Effect.gen(function* () {
      for (const path of GIT_PATHS) if (yield* runtime.hasPath(containerId, path)) return true
      return false
    })

  /**
   * A new container publishing on `requested` (the row's port), or on the
   * port ChoosePort gives a sandbox that has none yet; both are recorded on the row.
   */
  const create = (
    row: Sandbox,
    config: PrboxConfig,
    environment: ContainerEnvironment,
    workspacePath: string,
    requested: number | null,
    filledBesideStart: boolean
  ) =>
    Effect.gen(function* () {
      const { plan, distribution } = environment
      yield* refuseUnseenMounts(config, plan)
      const user = userSpec(ownership.sandboxUser)
      const folders = ownership.foldersOf(row.id, workspacePath)
      const sockets = yield* ownership.makeSockets(folders)
      const hostPort = yield* choosePort(row.id, requested)
      const spec = codeServerSpec({
        // A container made while the checkout runs comes before the row records its workspace.
        row: { ...row, workspacePath },
        config,
        plan,
        distribution,
        user,
        homePath: folders.home,
        sockets,
        engineHome,
        install,
        extraLabels,
        hostPort,
        previewUrlTemplate: previewUrlTemplate(row.id, previewPort)
      })
      const onProgress = (line: string) =>
        progress(row, line).pipe(Effect.catch((error) => Effect.logWarning(`progress: ${error.message}`)))
      // A Compose sandbox's container is its app service's, made with the project's others.
      const containerId =
        plan.compose === undefined
          ? yield* runtime.provision(spec, onProgress)
          : yield* provisionCompose(composeDeps, { sandboxId: row.id, spec, compose: plan.compose, onProgress })
      // The workspace first: without it nothing else can be judged.
      if (!filledBesideStart) yield* requireWorkspace(containerId, plan)
      yield* requireGlibc(containerId, plan, distribution)
      yield* writeStatus(row.id, "starting", { containerId, hostPort })
      yield* failIfStopRequested(row.id)
      return { containerId, hostPort }
    })

  /**
   * Creates (or reuses) and starts the container. The whole step holds the
   * sandbox (lifecycle, then container permit) and cannot be interrupted, so
   * a container that exists is always recorded on the row; the stop request
   * is checked before create, after create and after start. The row's port
   * is its URL for life: a container (re)created asks for it, and only when
   * something else holds it does the sandbox move to a new container on a
   * new port (`movedFrom`), saying so in its log. `created` says whether
   * this start made a new container (its create-time steps are due).
   * `early`: a start before the checkout (the row records the workspace
   * only after it); `checkoutInContainer` says whether the container's own
   * git is to write the files, else they were written before it started.
   */
  const start = Effect.fn("SandboxService.startContainer")(function* <E = never>(
    id: SandboxId,
    config: PrboxConfig,
    environment: ContainerEnvironment,
    early?: CheckoutAtStart<E>
  ) {
    return yield* lifecycle.holdSandbox(
      id,
      Effect.uninterruptible(
        Effect.gen(function* () {
          yield* failIfStopRequested(id)
          // code-server's output from here on is this start's (a reused container's earlier runs' is not).
          const since = new Date(yield* Clock.currentTimeMillis)
          const row = yield* getRow(id)
          const workspace = early?.workspacePath ?? row.workspacePath
          const filled = early?.filledBesideStart === true
          if (workspace === null) return yield* new SetupFailed({ reason: "the sandbox has no workspace" })
          let containerId = row.containerId
          let requested = row.hostPort
          if (containerId !== null && (yield* runtime.state(containerId))._tag === "Absent") containerId = null
          let created = containerId === null
          if (containerId === null)
            ({ containerId, hostPort: requested } = yield* create(
              row,
              config,
              environment,
              workspace,
              requested,
              filled
            ))
          // Nothing of the container has run yet: without git of its own, its files are written here first.
          const checkoutInContainer = early !== undefined && !filled && (yield* hasGit(containerId))
          if (early !== undefined && !checkoutInContainer) yield* early.checkoutHere
          // The host's last look inside: from here on a container of the sandbox may run.
          if ((yield* runtime.filesAt) === "host") {
            yield* ownership.seal(ownership.foldersOf(id, workspace), runtime, extraLabels)
          }
          let movedFrom: number | null = null
          const hostPort = yield* runtime.start(containerId).pipe(
            Effect.catchTag("PortTaken", () =>
              Effect.gen(function* () {
                // Docker fixes the binding at create: only a new container can publish elsewhere.
                movedFrom = requested
                created = true
                // The sandbox's carried files (the user's edits) stay for the new container.
                yield* runtime.destroy(containerId as string, { keepFiles: true })
                ;({ containerId } = yield* create(row, config, environment, workspace, null, filled))
                const moved = yield* runtime.start(containerId)
                if (movedFrom !== null) yield* progress({ id, status: "starting" }, portMovedLine(movedFrom, moved))
                return moved
              })
            ),
            // Exited before its port could be read: what the health wait says of a container that stops.
            Effect.catchTag("ContainerExited", () => Effect.fail(new SetupFailed({ reason: CONTAINER_EXITED })))
          )
          yield* writeStatus(id, "starting", { hostPort })
          yield* failIfStopRequested(id)
          return { containerId, hostPort, since, movedFrom, created, checkoutInContainer }
        })
      )
    )
  })

  /** What the container's output said: code-server listens, or the container stopped. */
  type Heard = "listening" | "ended"

  /**
   * Waits for code-server's /healthz to answer: the sandbox is ready only
   * then. Its output is followed meanwhile, so probes come fast once it says
   * it listens (healthProbePause), and a container that stopped fails at once.
   */
  const waitHealthy = Effect.fn("SandboxService.waitHealthy")(function* (
    row: Sandbox,
    container: { readonly containerId: string; readonly hostPort: number; readonly since: Date },
    config: PrboxConfig
  ) {
    const { containerId, hostPort } = container
    yield* progress(row, "waiting for code-server to answer")
    const started = yield* Clock.currentTimeMillis
    const deadline = started + config.healthTimeoutSeconds * 1000
    const output = yield* Deferred.make<Heard>()
    // Output that cannot be followed leaves the probes to find it at their own pace.
    const follower = yield* runtime.awaitOutputLine(containerId, container.since, isCodeServerListeningLine).pipe(
      Effect.flatMap((seen) => Deferred.succeed(output, seen ? "listening" : "ended")),
      Effect.ignore,
      Effect.forkChild
    )
    let heard: Heard | undefined
    const probing = Effect.gen(function* () {
      while (true) {
        const probe = yield* Effect.result(health.probe(hostPort))
        if (probe._tag === "Success") return
        const now = yield* Clock.currentTimeMillis
        if (now >= deadline) {
          return yield* new SetupFailed({
            reason: `code-server did not answer within ${config.healthTimeoutSeconds} s`
          })
        }
        const pause = Effect.sleep(healthProbePause(now - started, heard === "listening"))
        if (heard !== undefined) {
          yield* pause
          continue
        }
        heard = yield* Effect.raceFirst(Effect.as(pause, undefined), Deferred.await(output))
        // The output ends when the container stops; one still running (a cut stream) is left to the probes.
        if (heard === "ended" && (yield* runtime.state(containerId))._tag !== "Running") {
          return yield* new SetupFailed({ reason: CONTAINER_EXITED })
        }
      }
    })
    return yield* probing.pipe(Effect.ensuring(Fiber.interrupt(follower)))
  })

  return { start, waitHealthy }
})

export class CreateContainer extends Context.Service<CreateContainer, Effect.Success<typeof make>>()(
  "prbox/engine/CreateContainer"
) {
  static readonly layer = Layer.effect(CreateContainer, make)
}
