import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chown, mkdir, rm, stat } from "node:fs/promises"
import { join } from "node:path"
import {
  formatPullRequestKey,
  isAmbiguousProfile,
  isLive,
  isSupersededBy,
  type PullRequestKey,
  restartRefusal,
  type Sandbox,
  SandboxConflict,
  SandboxId
} from "@prbox/domain"
import { type PullRequestRef, parsePullRequestRef, Workspaces } from "@prbox/git"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { AccountIdentity } from "./AccountIdentity.ts"
import { Config, type PrboxConfig } from "./Config.ts"
import { ContainerRuntime, type ContainerSpec } from "./ContainerRuntime.ts"
import { type HookContext, type HookName, Hooks } from "./Hooks.ts"
import { LABELS } from "./Labels.ts"
import { Lifecycle, mapStoreErrors, StopWon, safeReason } from "./Lifecycle.ts"
import { Reconciler } from "./Reconciler.ts"
import { DestroyNotConfirmed, InvalidPullRequestInput, type OpenRequest, SandboxService } from "./SandboxService.ts"

/** Port code-server listens on inside the container. */
const CODE_SERVER_PORT = 8080
const CONTAINER_HOME = "/home/prbox"
const CONTAINER_WORKSPACE = "/workspace"
const SETUP_TIMEOUT_MS = 30 * 60_000
const SETUP_OUTPUT_BYTES = 1024 * 1024
/** Used when the workspace belongs to root: a sandbox never runs as root. */
const FALLBACK_UID = 1000

/** A create or restart step failed for a reason that is safe to store and show. */
class SetupFailed extends Schema.TaggedError<SetupFailed>()("SetupFailed", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

/**
 * Hands a workspace to the sandbox user. Files with more than one link are
 * left alone: they are the object files hardlinked from the shared mirror,
 * and handing them over would let one sandbox rewrite every other's history.
 * (Git never modifies an object file; new objects go into the user's dirs.)
 */
const chownTree = (path: string, uid: number, gid: number) =>
  Effect.callback<void, SetupFailed>((resume) => {
    const child = execFile(
      "find",
      ["-P", path, "!", "(", "-type", "f", "-links", "+1", ")", "-exec", "chown", "-h", `${uid}:${gid}`, "{}", "+"],
      (error) =>
        resume(
          error === null
            ? Effect.void
            : Effect.fail(new SetupFailed({ reason: "could not hand the workspace to the sandbox user" }))
        )
    )
    return Effect.sync(() => child.kill())
  })

export interface SandboxServiceOptions {
  /** Extra labels on every container (tests label their run with them). */
  readonly labels?: Readonly<Record<string, string>>
}

const newSandboxId = (): SandboxId => {
  const alphabet = "0123456789abcdefghijklmnopqrstuv"
  return SandboxId.make(Array.from(randomBytes(12), (byte) => alphabet[byte % 32]).join(""))
}

const newPassword = (): string => randomBytes(24).toString("base64url")

const sandboxUrl = (port: number | null): string => (port === null ? "" : `http://127.0.0.1:${port}/`)

export const make = (options: SandboxServiceOptions = {}) =>
  Effect.gen(function* () {
    const repo = yield* SandboxRepo
    const runtime = yield* ContainerRuntime
    const workspaces = yield* Workspaces
    const config = yield* Config
    const hooks = yield* Hooks
    const identity = yield* AccountIdentity
    const reconciler = yield* Reconciler
    const state = yield* Lifecycle
    const {
      admission,
      lifecycle,
      containerPermit,
      spawnWorker,
      failIfStopRequested,
      getRow,
      writeStatus,
      advance,
      emit,
      progress
    } = state

    const hookContext = (row: Sandbox): HookContext => ({
      sandboxId: row.id,
      pullRequest: `${row.host ?? ""}/${row.repository}#${row.pullRequest}`,
      url: sandboxUrl(row.hostPort),
      port: row.hostPort === null ? "" : String(row.hostPort),
      workspace: row.workspacePath ?? ""
    })

    const runHook = (row: Sandbox, hook: HookName, cfg: PrboxConfig) => {
      const argv = cfg.hooks[hook]
      if (argv === undefined) return Effect.void
      // A failing hook is reported in the log, never fatal.
      return hooks
        .run(hook, argv, hookContext(row))
        .pipe(Effect.catch((error) => progress(row, error.message).pipe(Effect.ignore)))
    }

    // --- workers ---------------------------------------------------------------

    /** Ends a worker: a stop ends it quietly, any other failure puts the row in `error`. */
    const supervise = <E>(row: Sandbox, work: Effect.Effect<void, E>): Effect.Effect<void> =>
      Effect.catch(work, (error) =>
        error instanceof StopWon
          ? Effect.void
          : advance(row.id, "error", { error: safeReason(error) }).pipe(Effect.ignore)
      )

    const containerSpec = (row: Sandbox, cfg: PrboxConfig, user: string, homePath: string): ContainerSpec => ({
      name: `prbox-${row.id}`,
      image: cfg.image,
      args: [
        "--bind-addr",
        `0.0.0.0:${CODE_SERVER_PORT}`,
        "--auth",
        "password",
        "--disable-telemetry",
        "--disable-update-check",
        CONTAINER_WORKSPACE
      ],
      // The password reaches code-server only through its environment, never argv.
      env: {
        ...cfg.env,
        HOME: CONTAINER_HOME,
        XDG_CONFIG_HOME: `${CONTAINER_HOME}/.config`,
        XDG_DATA_HOME: `${CONTAINER_HOME}/.local/share`,
        XDG_CACHE_HOME: `${CONTAINER_HOME}/.cache`,
        PASSWORD: row.accessPassword === null ? "" : Redacted.value(row.accessPassword)
      },
      labels: {
        ...cfg.labels,
        ...options.labels,
        [LABELS.sandbox]: row.id,
        [LABELS.pr]: String(row.pullRequest),
        [LABELS.repo]: `${row.host ?? ""}/${row.repository}`,
        [LABELS.home]: config.home
      },
      binds: [
        { hostPath: row.workspacePath ?? "", containerPath: CONTAINER_WORKSPACE, readOnly: false },
        { hostPath: homePath, containerPath: CONTAINER_HOME, readOnly: false },
        ...cfg.mounts.map((mount) => ({
          hostPath: mount.source,
          containerPath: mount.target,
          readOnly: mount.readOnly
        }))
      ],
      user,
      workingDir: CONTAINER_WORKSPACE,
      port: CODE_SERVER_PORT,
      ...(cfg.cpus === undefined ? {} : { cpus: cfg.cpus }),
      ...(cfg.memoryMb === undefined ? {} : { memoryBytes: cfg.memoryMb * 1024 * 1024 }),
      ...(cfg.pidsLimit === undefined ? {} : { pidsLimit: cfg.pidsLimit })
    })

    /** The user a sandbox runs as: the workspace's owner, never root. */
    const workspaceUser = (workspacePath: string) =>
      Effect.map(
        Effect.promise(() => stat(workspacePath)),
        (owner) => (owner.uid === 0 ? { uid: FALLBACK_UID, gid: FALLBACK_UID } : { uid: owner.uid, gid: owner.gid })
      )

    /**
     * A root-owned workspace (a daemon running as root) is handed to a fixed
     * non-root user; the sandbox's home directory belongs to the same user.
     */
    const prepareOwnership = (id: SandboxId, workspacePath: string) =>
      Effect.gen(function* () {
        const { uid, gid } = yield* workspaceUser(workspacePath)
        const owner = yield* Effect.promise(() => stat(workspacePath))
        if (owner.uid !== uid) yield* chownTree(workspacePath, uid, gid)
        const homePath = join(config.home, "homes", id)
        yield* Effect.promise(async () => {
          await mkdir(homePath, { recursive: true, mode: 0o700 })
          await chown(homePath, uid, gid)
        })
      })

    /**
     * Creates (or reuses) and starts the container. The whole step holds the
     * lifecycle permit (then the container's, the order reconcile uses too) and
     * cannot be interrupted, so a container that exists is always recorded on
     * the row; the stop request is checked before create, after create and
     * after start.
     */
    const startContainer = (id: SandboxId, cfg: PrboxConfig) =>
      lifecycle.withPermit(
        containerPermit(id).withPermit(
          Effect.uninterruptible(
            Effect.gen(function* () {
              yield* failIfStopRequested(id)
              const row = yield* getRow(id)
              const workspacePath = row.workspacePath
              if (workspacePath === null) return yield* new SetupFailed({ reason: "the sandbox has no workspace" })
              let containerId = row.containerId
              if (containerId !== null && (yield* runtime.state(containerId))._tag === "Absent") containerId = null
              if (containerId === null) {
                const { uid, gid } = yield* workspaceUser(workspacePath)
                const homePath = join(config.home, "homes", id)
                containerId = yield* runtime.provision(containerSpec(row, cfg, `${uid}:${gid}`, homePath))
                yield* writeStatus(id, "starting", { containerId })
                yield* failIfStopRequested(id)
              }
              const hostPort = yield* runtime.start(containerId)
              const started = yield* writeStatus(id, "starting", { hostPort })
              yield* failIfStopRequested(id)
              return { row: started, containerId, hostPort }
            })
          )
        )
      )

    const waitHealthy = (row: Sandbox, hostPort: number, cfg: PrboxConfig) =>
      Effect.gen(function* () {
        yield* progress(row, "waiting for code-server to answer")
        const deadline = (yield* Clock.currentTimeMillis) + cfg.healthTimeoutSeconds * 1000
        // Probe often at first (code-server answers within a second), then back off.
        let pause = 20
        while (true) {
          const probe = yield* Effect.result(runtime.health(hostPort))
          if (probe._tag === "Success") return
          if ((yield* Clock.currentTimeMillis) >= deadline) {
            return yield* Effect.fail(
              new SetupFailed({ reason: `code-server did not answer within ${cfg.healthTimeoutSeconds} s` })
            )
          }
          yield* Effect.sleep(pause)
          pause = Math.min(pause * 1.5, 500)
        }
      })

    const runSetup = (row: Sandbox, containerId: string, user: string, cfg: PrboxConfig) =>
      Effect.forEach(cfg.setupCommands, (command, index) =>
        Effect.gen(function* () {
          const step = `[${index + 1}/${cfg.setupCommands.length}]`
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

    /** From a started container to `running`: health, the ready hook, setup (on create only). */
    const becomeReady = (id: SandboxId, cfg: PrboxConfig, withSetup: boolean) =>
      Effect.gen(function* () {
        const workspacePath = (yield* getRow(id)).workspacePath
        if (workspacePath !== null) yield* prepareOwnership(id, workspacePath)
        const { row, containerId, hostPort } = yield* startContainer(id, cfg)
        yield* waitHealthy(row, hostPort, cfg)
        yield* runHook(row, "onSandboxReady", cfg)
        if (withSetup) {
          const { uid, gid } = yield* workspaceUser(row.workspacePath ?? "/")
          yield* runSetup(row, containerId, `${uid}:${gid}`, cfg)
        }
        yield* advance(id, "running", { detail: `ready at ${sandboxUrl(hostPort)}` })
      })

    const createWorker = (row: Sandbox, ref: PullRequestRef, cfg: PrboxConfig) =>
      supervise(
        row,
        Effect.gen(function* () {
          const cloning = yield* advance(row.id, "cloning")
          const onProgress = (line: string) => progress(cloning, line).pipe(Effect.ignore)
          const fetched = yield* workspaces.fetchPullRequest(ref, { onProgress })
          const workspacePath = join(config.home, "workspaces", row.id)
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
          yield* runtime.ensureImage(cfg.image, (line) => progress(starting, line).pipe(Effect.ignore))
          yield* becomeReady(row.id, cfg, true)
        })
      )

    const restartWorker = (row: Sandbox, cfg: PrboxConfig) => supervise(row, becomeReady(row.id, cfg, false))

    /** Moves a restartable row to `starting` and hands it to a worker. */
    const admitRestart = (row: Sandbox, cfg: PrboxConfig) =>
      Effect.gen(function* () {
        const refusal = restartRefusal(row)
        if (refusal !== undefined) return yield* new SandboxConflict({ id: row.id, reason: refusal })
        const starting = yield* lifecycle.withPermit(writeStatus(row.id, "starting", { error: null, stoppedAt: null }))
        yield* spawnWorker(row.id, restartWorker(starting, cfg))
        return starting
      })

    // --- open ------------------------------------------------------------------

    /**
     * A live row of the PR answers the open: a running one after one inspect
     * (a dead container is recorded and the sandbox restarted), a starting one
     * as it is, a stopping one with a conflict.
     */
    const answerLive = (live: Sandbox, cfg: PrboxConfig) =>
      Effect.gen(function* () {
        if (live.status === "stopping") {
          return yield* new SandboxConflict({ id: live.id, reason: "it is stopping; open it again once it stopped" })
        }
        if (live.status !== "running" || live.containerId === null) return live
        const state = yield* runtime.state(live.containerId)
        if (state._tag === "Running") {
          yield* repo.touch(live.id, yield* Clock.currentTimeMillis)
          return live
        }
        const stopped = yield* lifecycle.withPermit(
          writeStatus(live.id, "stopped", {
            stoppedAt: yield* Clock.currentTimeMillis,
            detail: "the container was no longer running"
          })
        )
        return yield* admitRestart(stopped, cfg)
      })

    /** Retires a fallback row on behalf of a create: its stop is owned here, so no worker of it races. */
    const retireOwned = (row: Sandbox) =>
      Effect.gen(function* () {
        yield* state.requestStop(row.id)
        yield* state.interruptWorkers(row.id)
        yield* reconciler.retire(row)
      }).pipe(
        Effect.ensuring(state.clearStop(row.id)),
        Effect.mapError(
          (error) =>
            new SandboxConflict({
              id: row.id,
              reason: `could not retire it for the discovered account (${safeReason(error)}); run \`prbox rm ${row.id}\``
            })
        )
      )

    /**
     * The account a new sandbox of this PR is keyed by. Discovered: the PR's
     * rows keyed by the profile (or by no account) are retired first.
     * Unavailable: the profile name, unless another live row of the PR would
     * make this a second sandbox, or the profile reads as an account id.
     */
    const chooseAccount = (
      ref: PullRequestRef,
      profile: string | undefined,
      discovered: Option.Option<string>,
      prRows: ReadonlyArray<Sandbox>
    ) =>
      Effect.gen(function* () {
        if (Option.isSome(discovered)) {
          const account = discovered.value
          const fallbacks = prRows.filter(
            (row) =>
              row.host === ref.host &&
              row.legacyRetiredAt === null &&
              isSupersededBy(row.account, account, profile ?? "")
          )
          yield* Effect.forEach(fallbacks, retireOwned, { discard: true })
          return account
        }
        const legacy = prRows.find((row) => row.host === null && row.account === profile)
        if (profile !== undefined && legacy !== undefined && isAmbiguousProfile(ref.provider, profile)) {
          return yield* new SandboxConflict({
            id: legacy.id,
            reason: `profile "${profile}" reads as an account id and matches a legacy sandbox; rename the profile`
          })
        }
        const account = profile ?? ""
        const other = prRows.find((row) => row.host === ref.host && row.account !== account && isLive(row))
        if (other !== undefined) {
          return yield* new SandboxConflict({
            id: other.id,
            reason: "account identity is unavailable; retry after account discovery"
          })
        }
        return account
      })

    const open = Effect.fn("SandboxService.open")(function* (request: OpenRequest) {
      const cfg = yield* config.load
      const parsed = parsePullRequestRef(request.input, {
        ...(request.pr === undefined ? {} : { pr: request.pr }),
        ...(request.ref === undefined ? {} : { ref: request.ref }),
        ...(cfg.profile === undefined ? {} : { profile: cfg.profile }),
        refPattern: cfg.pullRequestRefPattern
      })
      if (Result.isFailure(parsed)) return yield* new InvalidPullRequestInput({ reason: parsed.failure.message })
      const ref = parsed.success
      const discovered = yield* identity.discover({ provider: ref.provider, host: ref.host, profile: cfg.profile })
      const selector = { provider: ref.provider, repository: ref.repository, pullRequest: ref.pullRequest }
      return yield* admission.withPermit(
        Effect.gen(function* () {
          const samePr = (rows: ReadonlyArray<Sandbox>) => rows.filter((row) => row.host === ref.host)
          const prRows = yield* repo.findByPr(selector)
          const account = yield* chooseAccount(ref, cfg.profile, discovered, prRows)
          const key: PullRequestKey = { ...selector, host: ref.host, account }
          const fast = samePr(prRows).find((row) => row.account === account && isLive(row))
          if (fast?.status === "running") return yield* answerLive(fast, cfg)
          // Before anything is created, the PR's rows and containers are made to agree.
          yield* reconciler.reconcilePullRequest({ _tag: "PullRequest", ...selector })
          const rows = samePr(yield* repo.findByPr(selector)).filter((row) => row.account === account)
          const live = rows.find(isLive)
          if (live !== undefined) return yield* answerLive(live, cfg)
          const fenced = rows.find((row) => row.destroyFenced)
          if (fenced !== undefined) {
            return yield* new SandboxConflict({
              id: fenced.id,
              reason: `an earlier sandbox of ${formatPullRequestKey(key)} was not confirmed destroyed; run \`prbox rm ${fenced.id}\` first`
            })
          }
          // Reopening a stopped sandbox keeps its workspace (and the user's work in it).
          const restartable = rows.find((row) => restartRefusal(row) === undefined)
          if (restartable !== undefined) return yield* admitRestart(restartable, cfg)
          const now = yield* Clock.currentTimeMillis
          const row = yield* repo.insert({
            id: newSandboxId(),
            provider: key.provider,
            host: key.host,
            account: key.account,
            repository: key.repository,
            pullRequest: key.pullRequest,
            accessPassword: Redacted.make(newPassword()),
            createdAt: now,
            lastActivityAt: now
          })
          yield* emit(row.id, row.status, `opening ${formatPullRequestKey(key)}`)
          yield* spawnWorker(row.id, createWorker(row, ref, cfg))
          return row
        })
      )
    }, mapStoreErrors("sandbox.open"))

    // --- stop / restart / cleanup -------------------------------------------------

    /** Stops the container if any; a stop Docker does not confirm fences the row. */
    const stopContainer = (row: Sandbox) =>
      Effect.gen(function* () {
        if (row.containerId === null) return
        const containerId = row.containerId
        const outcome = yield* Effect.result(containerPermit(row.id).withPermit(runtime.stop(containerId)))
        if (outcome._tag === "Failure") {
          yield* lifecycle.withPermit(
            writeStatus(row.id, "error", { error: "stop not confirmed by Docker", destroyFenced: true })
          )
          return yield* new DestroyNotConfirmed({ id: row.id, detail: outcome.failure.message })
        }
      })

    const stop = Effect.fn("SandboxService.stop")(
      function* (id: SandboxId) {
        // The intent is public before any permit is awaited: a worker holding
        // one sees it at its next check, and interrupting it waits for its
        // uninterruptible container step to record what it created.
        yield* state.requestStop(id)
        yield* state.interruptWorkers(id)
        const current = yield* getRow(id)
        if (current.status === "stopped" && !current.destroyFenced) return current
        const stopping = yield* lifecycle.withPermit(writeStatus(id, "stopping"))
        // A broken config must not block a stop: the hook is skipped then.
        const cfg = yield* Effect.option(config.load)
        if (cfg._tag === "Some") yield* runHook(stopping, "onSandboxDestroy", cfg.value)
        yield* stopContainer(stopping)
        return yield* lifecycle.withPermit(
          writeStatus(id, "stopped", { stoppedAt: yield* Clock.currentTimeMillis, destroyFenced: false })
        )
      },
      (effect, id) => Effect.ensuring(effect, state.clearStop(id)),
      mapStoreErrors("sandbox.stop")
    )

    const restart = Effect.fn("SandboxService.restart")(function* (id: SandboxId) {
      const cfg = yield* config.load.pipe(
        Effect.mapError((error) => new SandboxConflict({ id, reason: error.message }))
      )
      return yield* admission.withPermit(Effect.flatMap(getRow(id), (row) => admitRestart(row, cfg)))
    }, mapStoreErrors("sandbox.restart"))

    const cleanup = Effect.fn("SandboxService.cleanup")(function* (id: SandboxId) {
      const row = yield* getRow(id)
      if (isLive(row) || row.destroyFenced) yield* stop(id)
      const stopped = yield* getRow(id)
      if (stopped.containerId !== null) {
        const containerId = stopped.containerId
        const removal = yield* Effect.result(containerPermit(id).withPermit(runtime.destroy(containerId)))
        if (removal._tag === "Failure") {
          yield* lifecycle.withPermit(
            writeStatus(id, "error", { error: "container removal not confirmed by Docker", destroyFenced: true })
          )
          return yield* new DestroyNotConfirmed({ id, detail: removal.failure.message })
        }
      }
      yield* Effect.promise(() =>
        Promise.all([
          stopped.workspacePath === null ? undefined : rm(stopped.workspacePath, { recursive: true, force: true }),
          rm(join(config.home, "homes", id), { recursive: true, force: true })
        ])
      )
      yield* lifecycle.withPermit(repo.delete(id))
      yield* state.forgetContainerPermit(id)
    }, mapStoreErrors("sandbox.cleanup"))

    /** A command in a running sandbox, as the user its setup ran as, in the workspace. */
    const exec = Effect.fn("SandboxService.exec")(function* (
      id: SandboxId,
      argv: ReadonlyArray<string>,
      options: { readonly timeoutMs: number; readonly maxOutputBytes: number }
    ) {
      const row = yield* getRow(id)
      if (row.destroyFenced) {
        return yield* new SandboxConflict({
          id,
          reason: "an earlier destroy was not confirmed; run `prbox rm` to retry it"
        })
      }
      if (row.status !== "running" || row.containerId === null || row.workspacePath === null) {
        return yield* new SandboxConflict({ id, reason: `it is ${row.status}; exec needs a running sandbox` })
      }
      const { uid, gid } = yield* workspaceUser(row.workspacePath)
      yield* repo.touch(id, yield* Clock.currentTimeMillis)
      return yield* runtime.exec(row.containerId, argv, { ...options, user: `${uid}:${gid}`, cwd: CONTAINER_WORKSPACE })
    }, mapStoreErrors("sandbox.exec"))

    return SandboxService.of({
      exec,
      open,
      get: (id) => getRow(id).pipe(mapStoreErrors("sandbox.get")),
      list: repo.findActive().pipe(mapStoreErrors("sandbox.list")),
      listAll: repo.findAll().pipe(mapStoreErrors("sandbox.listAll")),
      generation: repo.generation,
      stop,
      restart,
      cleanup,
      logs: (id, options) => repo.readLog(id, options).pipe(mapStoreErrors("sandbox.logs")),
      touch: (id) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => repo.touch(id, at)).pipe(mapStoreErrors("sandbox.touch")),
      events: state.events,
      awaitIdle: state.awaitIdle
    })
  })

export const layer = (options: SandboxServiceOptions = {}) =>
  Layer.effect(SandboxService, make(options)).pipe(
    Layer.provideMerge(Reconciler.layer),
    Layer.provideMerge(Lifecycle.layer)
  )
