import type { Prebuild } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type { RowDecodeError, StoreError } from "./SandboxRepo.ts"

/** How a prebuild that was `making` ended: ready with what it keeps, or failed with a safe reason. */
export type PrebuildEnd =
  | {
      readonly state: "ready"
      readonly image: string | null
      readonly volume: string
      readonly sizeBytes: number
      readonly readyAt: number
    }
  | { readonly state: "failed"; readonly error: string }

/** Stored errors are cut as a sandbox's are. */
export const PREBUILD_ERROR_CHARS = 500

/**
 * Prebuilds' rows, on the store's connection. A row is inserted `making`
 * and ends once (`finish`): a second end, or an end of a row that is gone,
 * changes nothing and says so (`false`), so a reconcile that ended a
 * crashed build is never overwritten by a late worker.
 */
export interface PrebuildRepoShape {
  readonly insert: (row: Prebuild) => Effect.Effect<void, StoreError>
  readonly get: (id: string) => Effect.Effect<Prebuild | undefined, StoreError | RowDecodeError>
  /** Every prebuild, newest first. */
  readonly list: Effect.Effect<ReadonlyArray<Prebuild>, StoreError | RowDecodeError>
  /** The newest ready prebuild of a key, if any. */
  readonly readyFor: (key: string) => Effect.Effect<Prebuild | undefined, StoreError | RowDecodeError>
  /** Ends a `making` row; `false` when it was not `making` (ended already, or gone). */
  readonly finish: (id: string, end: PrebuildEnd) => Effect.Effect<boolean, StoreError>
  /** `usedAt = max(usedAt, at)`. */
  readonly markUsed: (id: string, at: number) => Effect.Effect<void, StoreError>
  readonly delete: (id: string) => Effect.Effect<void, StoreError>
}

export class PrebuildRepo extends Context.Service<PrebuildRepo, PrebuildRepoShape>()("prbox/store/PrebuildRepo") {}
