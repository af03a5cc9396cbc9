import { Context, type Effect } from "effect"
import type { DiscoveryFailed } from "./Errors.ts"

export interface LeftoverHelpersReport {
  /** The ids of the helper containers removed. */
  readonly removed: ReadonlyArray<string>
  /** A leftover that could not be removed: said, never fatal (a later start tries again). */
  readonly failures: ReadonlyArray<{ readonly containerId: string; readonly detail: string }>
}

export interface LeftoverHelpersShape {
  /**
   * Removes this home's and install's helper containers that another process
   * made and left (a daemon killed mid-operation): never started or ended,
   * never a sandbox's (domain decideLeftoverHelper). A listing that fails is
   * DiscoveryFailed, never "none left".
   */
  readonly remove: Effect.Effect<LeftoverHelpersReport, DiscoveryFailed>
}

/** The helper containers a killed daemon left on the configured engine, removed at the next start. */
export class LeftoverHelpers extends Context.Service<LeftoverHelpers, LeftoverHelpersShape>()(
  "prbox/engine/LeftoverHelpers"
) {}
