import type { SandboxId } from "@prbox/domain"
import type { SandboxRepo } from "@prbox/store"
import { Effect } from "effect"
import type { AccountIdentityShape } from "./AccountIdentity.ts"
import type { ContainerRuntimeShape, LabelledContainer } from "./ContainerRuntime.ts"
import { DiscoveryFailed, safeReason } from "./Errors.ts"
import { LABELS } from "./Labels.ts"
import type { LifecycleShape } from "./Lifecycle.ts"

export interface ReconcileChange {
  readonly sandboxId: string | null
  readonly containerId: string | null
  readonly action: string
}

export interface ReconcileFailure {
  readonly sandboxId: string
  readonly detail: string
}

export type PassName = "drift" | "legacy" | "account"

export interface PassReport {
  readonly pass: PassName
  readonly changes: ReadonlyArray<ReconcileChange>
  readonly failures: ReadonlyArray<ReconcileFailure>
}

/** Which rows and containers a run looks at: everything, or one PR's. */
export type ReconcileScope =
  | { readonly _tag: "All" }
  | {
      readonly _tag: "PullRequest"
      readonly provider: Parameters<SandboxRepo["Service"]["findByPr"]>[0]["provider"]
      readonly repository: string
      readonly pullRequest: Parameters<SandboxRepo["Service"]["findByPr"]>[0]["pullRequest"]
    }

/** What every pass works with; the caller holds the lifecycle permit for the whole run. */
export interface PassContext {
  readonly repo: SandboxRepo["Service"]
  readonly runtime: ContainerRuntimeShape
  readonly state: LifecycleShape
  readonly identity: AccountIdentityShape
  readonly home: string
  readonly scope: ReconcileScope
}

/** The rows and labelled containers in scope; a failed listing fails closed. */
export const discover = (ctx: PassContext) =>
  Effect.gen(function* () {
    const rows = yield* (ctx.scope._tag === "All" ? ctx.repo.findAll() : ctx.repo.findByPr(ctx.scope)).pipe(
      Effect.mapError((error) => new DiscoveryFailed({ operation: "sandboxes", detail: error.message }))
    )
    const labels: Record<string, string> =
      ctx.scope._tag === "All"
        ? { [LABELS.home]: ctx.home }
        : { [LABELS.home]: ctx.home, [LABELS.pr]: String(ctx.scope.pullRequest) }
    const listed = yield* ctx.runtime
      .listByLabel(labels)
      .pipe(Effect.mapError((error) => new DiscoveryFailed({ operation: "containers", detail: error.message })))
    const scope = ctx.scope
    const containers =
      scope._tag === "All"
        ? listed
        : listed.filter((container) => (container.labels[LABELS.repo] ?? "").endsWith(`/${scope.repository}`))
    return { rows, containers }
  })

/** Every container the row records or that carries its label. */
export const containersOf = (
  row: { readonly id: SandboxId; readonly containerId: string | null },
  containers: ReadonlyArray<LabelledContainer>
): ReadonlyArray<string> => [
  ...new Set([
    ...(row.containerId === null ? [] : [row.containerId]),
    ...containers.filter((c) => c.labels[LABELS.sandbox] === row.id).map((c) => c.containerId)
  ])
]

/** Stops the containers; resolves only when Docker confirmed each stopped or absent. */
export const stopContainers = (ctx: PassContext, id: SandboxId, containerIds: ReadonlyArray<string>) =>
  Effect.forEach(containerIds, (containerId) => ctx.state.withContainer(id, ctx.runtime.stop(containerId)), {
    discard: true
  })

/**
 * Runs one row's step; a failure is reported for that row and the row is
 * left as the failed step left it (every write is a single transaction).
 */
export const perRow = <A, E>(id: SandboxId, step: Effect.Effect<A, E>) =>
  Effect.result(step).pipe(
    Effect.map((result) =>
      result._tag === "Success"
        ? { changes: [result.success].flat() as ReadonlyArray<ReconcileChange>, failures: [] }
        : {
            changes: [],
            failures: [{ sandboxId: id, detail: safeReason(result.failure) }]
          }
    )
  )

export const collect = (
  pass: PassName,
  results: ReadonlyArray<{ changes: ReadonlyArray<ReconcileChange>; failures: ReadonlyArray<ReconcileFailure> }>
): PassReport => ({
  pass,
  changes: results.flatMap((r) => r.changes),
  failures: results.flatMap((r) => r.failures)
})
