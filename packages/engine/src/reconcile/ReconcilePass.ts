import type { SandboxId, SandboxStatus } from "@prbox/domain"
import type { StatusUpdate } from "@prbox/store"
import { Effect, Ref } from "effect"
import type { AccountIdentityShape } from "../AccountIdentity.ts"
import type { ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { safeReason } from "../Errors.ts"
import type { LifecycleShape } from "../Lifecycle.ts"
import { type ReconcileSnapshot, withRow, withStopped } from "./ReconcileSnapshot.ts"

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

/**
 * What every pass works with; the caller holds the lifecycle permit for the
 * whole run. Writes go through `writeStatus` and `stopContainers` below, which
 * keep `current` up to date, so the next pass sees them.
 */
export interface PassContext {
  readonly runtime: ContainerRuntimeShape
  readonly state: LifecycleShape
  readonly identity: AccountIdentityShape
  /** The run's snapshot as its writes have left it. */
  readonly current: Ref.Ref<ReconcileSnapshot>
}

/** One pass over the snapshot the earlier passes left; a row's failure is reported, never fatal. */
export type ReconcilePass = (ctx: PassContext, snapshot: ReconcileSnapshot) => Effect.Effect<PassReport>

/** Writes a status (the caller holds the lifecycle permit) and records the row in the run's snapshot. */
export const writeStatus = (
  ctx: PassContext,
  id: SandboxId,
  to: SandboxStatus,
  fields: Omit<StatusUpdate, "to"> = {}
) => Effect.tap(ctx.state.writeStatus(id, to, fields), (row) => Ref.update(ctx.current, (s) => withRow(s, row)))

const recordStopped = (ctx: PassContext, containerId: string) =>
  Ref.update(ctx.current, (s) => withStopped(s, containerId))

/** Stops the sandbox's containers; resolves only when Docker confirmed each stopped or absent. */
export const stopContainers = (ctx: PassContext, id: SandboxId, containerIds: ReadonlyArray<string>) =>
  Effect.forEach(
    containerIds,
    (containerId) =>
      ctx.state.withContainer(id, ctx.runtime.stop(containerId)).pipe(Effect.andThen(recordStopped(ctx, containerId))),
    { discard: true }
  )

/** A container no row claims has no sandbox to serialize with: it is stopped without a permit. */
export const stopUnowned = (ctx: PassContext, containerId: string) =>
  Effect.andThen(ctx.runtime.stop(containerId), recordStopped(ctx, containerId))

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
