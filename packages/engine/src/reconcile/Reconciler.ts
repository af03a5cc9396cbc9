import type { Sandbox } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Context, Effect, Layer, Option, Ref } from "effect"
import { AccountIdentity } from "../AccountIdentity.ts"
import { Config } from "../Config.ts"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { Engines } from "../Engines.ts"
import { DiscoveryFailed, type RuntimeError, safeReason } from "../Errors.ts"
import { Installation } from "../Installation.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { accountPass } from "./AccountPass.ts"
import { driftPass } from "./DriftPass.ts"
import { legacyPass, retire } from "./LegacyPass.ts"
import type { PassContext, PassName, PassReport, ReconcilePass } from "./ReconcilePass.ts"
import {
  engineSnapshot,
  listContainers,
  type ReconcileScope,
  type ReconcileSnapshot,
  readRows
} from "./ReconcileSnapshot.ts"

const toDiscoveryFailed = (error: DiscoveryFailed | RuntimeError) =>
  error._tag === "DiscoveryFailed" ? error : new DiscoveryFailed({ operation: "containers", detail: error.message })

/** Each pass's report once, its changes and failures from every engine in the order they ran. */
const mergeReports = (reports: ReadonlyArray<PassReport>): ReadonlyArray<PassReport> => {
  const byPass = new Map<PassName, PassReport>()
  for (const report of reports) {
    const seen = byPass.get(report.pass)
    byPass.set(
      report.pass,
      seen === undefined
        ? report
        : { ...seen, changes: [...seen.changes, ...report.changes], failures: [...seen.failures, ...report.failures] }
    )
  }
  return [...byPass.values()]
}

export interface ReconcileReport {
  readonly passes: ReadonlyArray<PassReport>
}

export interface ReconcilerShape {
  /** Every pass over every row and labelled container: at daemon start and on demand. */
  readonly reconcile: Effect.Effect<ReconcileReport, DiscoveryFailed>
  /** The same passes for one PR, before each create. */
  readonly reconcilePullRequest: (
    scope: Extract<ReconcileScope, { readonly _tag: "PullRequest" }>
  ) => Effect.Effect<ReconcileReport, DiscoveryFailed>
  /** Retires one row now (for a create that supersedes it); the caller owns its stop. */
  readonly retire: (row: Sandbox) => Effect.Effect<void, unknown>
}

/**
 * Runs the reconcile passes under the lifecycle permit. A run reads the rows
 * and lists the labelled containers once; each pass gets that snapshot as the
 * passes before it left it.
 */
export class Reconciler extends Context.Service<Reconciler, ReconcilerShape>()("prbox/engine/Reconciler") {
  static readonly layer = Layer.effect(
    Reconciler,
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      const engines = yield* Engines
      const state = yield* Lifecycle
      const identity = yield* AccountIdentity
      const config = yield* Config
      const install = (yield* Installation).id

      const contextOf = (runtime: ContainerRuntimeShape, snapshot: ReconcileSnapshot) =>
        Effect.map(Ref.make(snapshot), (current): PassContext => ({ runtime, state, identity, current }))

      const target = (runtime: ContainerRuntimeShape) => ({ runtime, home: config.home, install })

      /**
       * One engine's passes over its own rows and containers. The configured
       * engine failing to list fails the run (as it always did); another
       * engine that cannot be reached or listed leaves its rows as they are
       * and reports each of them.
       */
      const runEngine = (
        engine: string | null,
        rows: ReadonlyArray<Sandbox>,
        scope: ReconcileScope,
        passes: ReadonlyArray<ReconcilePass>
      ) =>
        Effect.gen(function* () {
          const listed = yield* Effect.result(
            Effect.flatMap(engines.runtimeFor(engine), (runtime) =>
              Effect.map(listContainers(target(runtime), scope), (containers) => ({ runtime, containers }))
            )
          )
          if (listed._tag === "Failure") {
            if (engine === engines.current) return yield* toDiscoveryFailed(listed.failure)
            const detail = `${safeReason(listed.failure)}; left as it is`
            const failures = rows.filter((row) => row.engine === engine).map((row) => ({ sandboxId: row.id, detail }))
            return [{ pass: "drift", changes: [], failures }] satisfies ReadonlyArray<PassReport>
          }
          const ctx = yield* contextOf(listed.success.runtime, engineSnapshot(rows, engine, listed.success.containers))
          return yield* Effect.forEach(passes, (pass) => Effect.flatMap(Ref.get(ctx.current), (s) => pass(ctx, s)))
        })

      // The whole run holds the lifecycle permit: no worker or stop writes a
      // status between what a pass read and what it writes.
      const run = (scope: ReconcileScope) =>
        state.serialized(
          Effect.gen(function* () {
            // A broken config must not stop reconcile; it only loses the profile.
            const profile = Option.getOrUndefined(yield* Effect.option(config.load))?.profile
            const passes: ReadonlyArray<ReconcilePass> = [driftPass, legacyPass, accountPass(profile)]
            const rows = yield* readRows(repo, scope)
            const each = new Set([engines.current, ...rows.map((row) => row.engine)])
            const reports = yield* Effect.forEach(each, (engine) => runEngine(engine, rows, scope, passes))
            return { passes: mergeReports(reports.flat()) }
          })
        )

      return Reconciler.of({
        reconcile: Effect.withSpan(run({ _tag: "All" }), "Reconciler.reconcile"),
        reconcilePullRequest: (scope) => Effect.withSpan(run(scope), "Reconciler.reconcilePullRequest"),
        retire: (row) =>
          state.serialized(
            Effect.gen(function* () {
              const runtime = yield* engines.runtimeFor(row.engine)
              const containers = yield* listContainers(target(runtime), { _tag: "PullRequest", ...row })
              yield* retire(yield* contextOf(runtime, { rows: [row], containers }), row, containers)
            })
          )
      })
    })
  )
}
