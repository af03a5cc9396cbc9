import type { Sandbox } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Context, Effect, Layer, Option } from "effect"
import { AccountIdentity } from "./AccountIdentity.ts"
import { accountPass } from "./AccountPass.ts"
import { Config } from "./Config.ts"
import { ContainerRuntime } from "./ContainerRuntime.ts"
import { driftPass } from "./DriftPass.ts"
import type { DiscoveryFailed } from "./Errors.ts"
import { legacyPass, retire } from "./LegacyPass.ts"
import { Lifecycle } from "./Lifecycle.ts"
import { discover, type PassContext, type PassReport, type ReconcileScope } from "./Reconcile.ts"

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

export class Reconciler extends Context.Service<Reconciler, ReconcilerShape>()("prbox/engine/Reconciler") {
  static readonly layer = Layer.effect(
    Reconciler,
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      const runtime = yield* ContainerRuntime
      const state = yield* Lifecycle
      const identity = yield* AccountIdentity
      const config = yield* Config

      // The whole run holds the lifecycle permit: no worker or stop writes a
      // status between what a pass read and what it writes.
      const run = (scope: ReconcileScope) =>
        state.serialized(
          Effect.gen(function* () {
            const ctx: PassContext = { repo, runtime, state, identity, home: config.home, scope }
            // A broken config must not stop reconcile; it only loses the profile.
            const profile = Option.getOrUndefined(yield* Effect.option(config.load))?.profile
            const drift = yield* driftPass(ctx)
            const legacy = yield* legacyPass(ctx)
            const account = yield* accountPass(ctx, profile)
            return { passes: [drift, legacy, account] }
          })
        )

      return Reconciler.of({
        reconcile: Effect.withSpan(run({ _tag: "All" }), "Reconciler.reconcile"),
        reconcilePullRequest: (scope) => Effect.withSpan(run(scope), "Reconciler.reconcilePullRequest"),
        retire: (row) =>
          state.serialized(
            Effect.gen(function* () {
              const scope: ReconcileScope = { _tag: "PullRequest", ...row }
              const ctx: PassContext = { repo, runtime, state, identity, home: config.home, scope }
              const { containers } = yield* discover(ctx)
              yield* retire(ctx, row, containers)
            })
          )
      })
    })
  )
}
