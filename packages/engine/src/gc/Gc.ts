import {
  assessGc,
  type GcPlan,
  type HeartbeatProbe,
  intersectPlans,
  PROBE_LABEL,
  readHeartbeat,
  type Sandbox,
  type SandboxId,
  statePaths
} from "@prbox/domain"
import { PullRequests } from "@prbox/git"
import { SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, FileSystem, Layer, Option } from "effect"
import { CodeServerHealth } from "../CodeServerHealth.ts"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { LABELS } from "../ContainerSpec.ts"
import { Engines } from "../Engines.ts"
import {
  DiscoveryFailed,
  HostFailure,
  hostErrorCode,
  mapStoreErrors,
  type StoreFailure,
  safeReason
} from "../Errors.ts"
import { Installation, ownInstall } from "../Installation.ts"
import { SandboxService } from "../sandbox/SandboxService.ts"
import { removeSandboxFolders } from "../workspace/Ownership.ts"
import { CleanupIncomplete } from "./Errors.ts"

const MINUTE = 60_000

export interface GcFailure {
  readonly sandboxId: string
  readonly detail: string
}

export interface GcReport {
  /** What was acted on (after revalidation against a confirmed plan). */
  readonly plan: GcPlan
  readonly stopped: ReadonlyArray<SandboxId>
  readonly removed: ReadonlyArray<SandboxId>
  readonly failures: ReadonlyArray<GcFailure>
}

/**
 * This install's containers (on the configured engine) with no row, its
 * sandbox volumes there whose sandbox has no row, and workspace/home
 * directories no row references.
 */
export interface PrunePlan {
  readonly containers: ReadonlyArray<string>
  readonly volumes: ReadonlyArray<string>
  readonly directories: ReadonlyArray<string>
}

export interface PruneReport {
  readonly plan: PrunePlan
  /** What was actually removed (the plan less what failed). */
  readonly removed: PrunePlan
  readonly failures: ReadonlyArray<GcFailure>
}

export interface GcShape {
  /** What a run would do now (a dry run). */
  readonly plan: Effect.Effect<GcPlan, StoreFailure | DiscoveryFailed>
  /**
   * Acts on the current plan; given a confirmed (shown) plan, only on what
   * is in both. Any failed action makes the run fail with the full report.
   */
  readonly run: (confirmed?: GcPlan) => Effect.Effect<GcReport, CleanupIncomplete | StoreFailure | DiscoveryFailed>
  readonly planPrune: Effect.Effect<PrunePlan, StoreFailure | DiscoveryFailed>
  readonly prune: (
    confirmed: PrunePlan
  ) => Effect.Effect<PruneReport, CleanupIncomplete | StoreFailure | DiscoveryFailed>
  /** Runs `run()` every `gcIntervalMinutes` (read afresh each time); failures are logged. */
  readonly timer: Effect.Effect<never>
}

export class Gc extends Context.Service<Gc, GcShape>()("prbox/engine/Gc") {
  static readonly layer = Layer.effect(
    Gc,
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      const runtime = yield* ContainerRuntime
      const health = yield* CodeServerHealth
      const engines = yield* Engines
      const install = (yield* Installation).id
      const sandboxes = yield* SandboxService
      const config = yield* Config
      const pullRequests = yield* PullRequests
      const fs = yield* FileSystem.FileSystem
      const paths = statePaths(config.home)

      // An unreadable config deletes nothing for a closed PR: the default is off.
      const policyOf = (cfg: PrboxConfig | undefined) => ({
        idleTimeoutMs: (cfg?.idleTimeoutMinutes ?? 30) * MINUTE,
        cleanupDelayMs: (cfg?.cleanupDelayHours ?? 24) * 60 * MINUTE,
        deleteWhenClosed: cfg?.deleteWhenClosed ?? false,
        closedGraceMs: (cfg?.closedGraceMinutes ?? 60) * MINUTE
      })

      /**
       * Each row's PR state asked afresh (the resolver caches it for a minute)
       * and recorded; a row the service says nothing new of stays as it was:
       * an unknown state never counts as closed.
       */
      const refreshPullRequest = (row: Sandbox, profile: string | undefined) =>
        Effect.gen(function* () {
          if (row.host === null) return row
          const answer = yield* pullRequests.lookup({
            provider: row.provider,
            host: row.host,
            repository: row.repository,
            pullRequest: row.pullRequest,
            ...(profile === undefined ? {} : { profile })
          })
          if (answer._tag !== "Known") return row
          return yield* repo.recordPullRequest(row.id, answer.info, yield* Clock.currentTimeMillis)
        }).pipe(
          // A row deleted meanwhile, or a failed write: the plan reads the row as it was.
          Effect.catch((error) => Effect.as(Effect.logWarning(`gc: ${row.id}: ${error.message}`), row))
        )

      /** One `/healthz` probe; a failure or timeout is an answer we cannot trust, not "idle". */
      const probe = (hostPort: number) =>
        health.probe(hostPort).pipe(
          Effect.map((health): HeartbeatProbe => readHeartbeat(health.lastHeartbeat)),
          Effect.catch((error) => Effect.succeed<HeartbeatProbe>({ _tag: "Unanswered", detail: error.detail }))
        )

      /**
       * The rows whose engine answers: another engine's rows are stopped and
       * removed there, and left alone (logged each pass) while it cannot be reached.
       */
      const reachableRows = (rows: ReadonlyArray<Sandbox>) =>
        Effect.gen(function* () {
          const others = new Set(rows.flatMap((row) => (row.engine === engines.current ? [] : [row.engine])))
          const unreachable = new Set<string | null>()
          for (const engine of others) {
            const reached = yield* Effect.result(engines.runtimeFor(engine))
            if (reached._tag === "Success") continue
            unreachable.add(engine)
            yield* Effect.logWarning(`gc skips the sandboxes of ${reached.failure.message}`)
          }
          return rows.filter((row) => !unreachable.has(row.engine))
        })

      const plan = Effect.gen(function* () {
        const cfg = Option.getOrUndefined(yield* Effect.option(config.load))
        const stored = yield* reachableRows(yield* repo.findAll().pipe(mapStoreErrors("gc.plan")))
        const rows = yield* Effect.forEach(stored, (row) => refreshPullRequest(row, cfg?.profile), { concurrency: 4 })
        const probes = yield* Effect.forEach(
          rows.flatMap((row) =>
            row.status === "running" && row.hostPort !== null ? [[row.id, row.hostPort] as const] : []
          ),
          ([id, hostPort]) => Effect.map(probe(hostPort), (outcome) => [id, outcome] as const),
          { concurrency: 8 }
        )
        const assessment = assessGc(rows, yield* Clock.currentTimeMillis, policyOf(cfg), new Map(probes))
        // Kept because the probe could not be trusted: the daemon's log says so, each pass.
        yield* Effect.forEach(assessment.uncertain, ({ id, reason }) => Effect.logWarning(`gc keeps ${id}: ${reason}`))
        yield* Effect.forEach(assessment.closed, ({ id, reason }) =>
          Effect.logInfo(`gc plans to delete ${id}: ${reason}`)
        )
        return assessment.plan
      })

      const attempt = <A, E>(id: SandboxId, effect: Effect.Effect<A, E>) =>
        Effect.map(Effect.result(effect), (result) =>
          result._tag === "Success" ? undefined : { sandboxId: id, detail: safeReason(result.failure) }
        )

      const run = Effect.fn("Gc.run")(function* (confirmed?: GcPlan) {
        const current = yield* plan
        const acted = confirmed === undefined ? current : intersectPlans(confirmed, current)
        const stopFailures = yield* Effect.forEach(acted.stop, (id) => attempt(id, sandboxes.stop(id)))
        const removeFailures = yield* Effect.forEach(acted.remove, (id) => attempt(id, sandboxes.delete(id)))
        const failures = [...stopFailures, ...removeFailures].filter((f) => f !== undefined)
        const failed = new Set(failures.map((f) => f.sandboxId))
        const stopped = acted.stop.filter((id) => !failed.has(id))
        const removed = acted.remove.filter((id) => !failed.has(id))
        if (failures.length > 0) return yield* new CleanupIncomplete({ operation: "gc", failures, stopped, removed })
        return { plan: acted, stopped, removed, failures } satisfies GcReport
      })

      /** A directory that does not exist holds nothing; one that cannot be read fails the plan. */
      const listDirectories = (dir: string) =>
        fs.readDirectory(dir).pipe(
          Effect.catch((error) =>
            error.reason._tag === "NotFound"
              ? Effect.succeed([])
              : Effect.fail(new DiscoveryFailed({ operation: dir, detail: hostErrorCode(error) }))
          ),
          Effect.map((names) => names.map((name) => ({ name, path: `${dir}/${name}` })))
        )

      const planPrune = Effect.gen(function* () {
        const rows = yield* repo.findAll().pipe(mapStoreErrors("prune.plan"))
        const ids = new Set<string>(rows.map((row) => row.id))
        const containers = yield* runtime
          .listByLabel({ [LABELS.home]: config.home })
          .pipe(Effect.mapError((error) => new DiscoveryFailed({ operation: "containers", detail: error.message })))
        // An install id is a volume's only owner: its home label is a path, and paths repeat across machines.
        const volumes = yield* runtime
          .listFilesByLabel({ [LABELS.install]: install })
          .pipe(Effect.mapError((error) => new DiscoveryFailed({ operation: "volumes", detail: error.message })))
        const directories = [
          ...(yield* listDirectories(paths.sandboxes)),
          ...(yield* listDirectories(paths.workspaces)),
          ...(yield* listDirectories(paths.sandboxHomes))
        ]
        return {
          // A helper (PROBE_LABEL) may be in use: a killed daemon's go at the next start (LeftoverHelpers).
          containers: containers
            .filter((c) => ownInstall(c.labels, install) && c.labels[PROBE_LABEL] === undefined)
            .filter((c) => !ids.has(c.labels[LABELS.sandbox] ?? ""))
            .map((c) => c.containerId),
          // The shared code-server volume belongs to no sandbox: kept.
          volumes: volumes
            .filter((v) => {
              const sandbox = v.labels[LABELS.sandbox]
              return sandbox !== undefined && !ids.has(sandbox)
            })
            .map((v) => v.name),
          directories: directories.filter((d) => !ids.has(d.name)).map((d) => d.path)
        } satisfies PrunePlan
      })

      /** A sandbox's folder of the sealed layout goes as a delete's does (the engine clears a sealed one). */
      const removeDirectory = (path: string) => {
        const name = path.slice(paths.sandboxes.length + 1)
        return path === `${paths.sandboxes}/${name}`
          ? removeSandboxFolders(fs, paths.sandbox(name), Effect.succeed(runtime), {})
          : fs
              .remove(path, { recursive: true, force: true })
              .pipe(Effect.mapError((error) => new HostFailure({ operation: "remove", detail: hostErrorCode(error) })))
      }

      const prune = Effect.fn("Gc.prune")(function* (confirmed: PrunePlan) {
        const current = yield* planPrune
        const acted: PrunePlan = {
          containers: current.containers.filter((id) => confirmed.containers.includes(id)),
          volumes: current.volumes.filter((name) => confirmed.volumes.includes(name)),
          directories: current.directories.filter((path) => confirmed.directories.includes(path))
        }
        const containerFailures = yield* Effect.forEach(acted.containers, (containerId) =>
          Effect.map(Effect.result(runtime.destroy(containerId)), (result) =>
            result._tag === "Success" ? undefined : { sandboxId: containerId, detail: result.failure.message }
          )
        )
        // After the containers: a volume is removed only once no container uses it.
        const volumeFailures = yield* Effect.forEach(acted.volumes, (name) =>
          Effect.map(Effect.result(runtime.removeFiles(name)), (result) =>
            result._tag === "Success" ? undefined : { sandboxId: name, detail: result.failure.message }
          )
        )
        const directoryFailures = yield* Effect.forEach(acted.directories, (path) =>
          Effect.map(Effect.result(removeDirectory(path)), (result) =>
            result._tag === "Success" ? undefined : { sandboxId: path, detail: result.failure.message }
          )
        )
        const failures = [...containerFailures, ...volumeFailures, ...directoryFailures].filter((f) => f !== undefined)
        const failed = new Set(failures.map((f) => f.sandboxId))
        const removed: PrunePlan = {
          containers: acted.containers.filter((id) => !failed.has(id)),
          volumes: acted.volumes.filter((name) => !failed.has(name)),
          directories: acted.directories.filter((path) => !failed.has(path))
        }
        if (failures.length > 0) {
          return yield* new CleanupIncomplete({
            operation: "prune",
            failures,
            stopped: [],
            removed: [...removed.containers, ...removed.volumes, ...removed.directories]
          })
        }
        return { plan: acted, removed, failures } satisfies PruneReport
      })

      const timer = Effect.gen(function* () {
        const cfg = Option.getOrUndefined(yield* Effect.option(config.load))
        yield* Effect.sleep((cfg?.gcIntervalMinutes ?? 5) * MINUTE)
        yield* run().pipe(
          Effect.tap((report) =>
            report.stopped.length + report.removed.length > 0
              ? Effect.logInfo(`gc stopped ${report.stopped.length}, removed ${report.removed.length}`)
              : Effect.void
          ),
          Effect.catch((error) => Effect.logWarning(`gc: ${error.message}`))
        )
      }).pipe(Effect.forever)

      return Gc.of({ plan, run, planPrune, prune, timer })
    })
  )
}
