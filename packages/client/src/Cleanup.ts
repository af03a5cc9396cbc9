import type { GcPlan, GcReport, MaintenanceFailure, PrunePlan, PruneReport } from "@prbox/protocol"
import { Effect } from "effect"
import type { ClientError } from "./ClientErrors.ts"
import type { PrboxClientShape } from "./PrboxClient.ts"

/**
 * A deletion the user confirms (design guarantee 7): the daemon computes a
 * plan, the user sees it, and the daemon then acts only on what was shown and
 * is still true. `gc` and `prune` are the two kinds.
 */
export interface Cleanup<Plan, Report extends { readonly plan: Plan }> {
  /** What would be done now, without doing it (the daemon's dry run). */
  readonly plan: Effect.Effect<Report, ClientError>
  readonly isEmpty: (plan: Plan) => boolean
  /** Acts on `shown`, intersected by the daemon with a plan it recomputes. */
  readonly act: (shown: Plan) => Effect.Effect<Report, ClientError>
  /** The mutations that failed: each is reported, and any makes the command fail. */
  readonly failures: (report: Report) => ReadonlyArray<MaintenanceFailure>
}

export const gc = (client: PrboxClientShape): Cleanup<GcPlan, GcReport> => ({
  plan: client.gc({ execute: false }),
  isEmpty: (plan) => plan.stop.length === 0 && plan.remove.length === 0,
  act: (shown) => client.gc({ execute: true, shown }),
  failures: (report) => report.failures
})

export const prune = (client: PrboxClientShape): Cleanup<PrunePlan, PruneReport> => ({
  plan: client.prune({ execute: false }),
  isEmpty: (plan) => plan.containers.length === 0 && plan.volumes.length === 0 && plan.directories.length === 0,
  act: (shown) => client.prune({ execute: true, shown }),
  failures: (report) => report.failures
})

/** How a cleanup ended; `planned` is the dry run the user saw. */
export type Outcome<Report> =
  | { readonly _tag: "Nothing"; readonly planned: Report }
  | { readonly _tag: "DryRun"; readonly planned: Report }
  | { readonly _tag: "Declined"; readonly planned: Report }
  | {
      readonly _tag: "Done"
      readonly planned: Report
      readonly report: Report
      readonly failures: ReadonlyArray<MaintenanceFailure>
    }

/**
 * Plan → confirm → act, the one way every client runs a cleanup: nothing is
 * asked when there is nothing to do or only a dry run was wanted, and nothing
 * is done unless `confirm` (which shows the plan) says yes.
 */
export const planConfirmAct = <Plan, Report extends { readonly plan: Plan }, E, R>(
  cleanup: Cleanup<Plan, Report>,
  options: {
    readonly dryRun?: boolean
    /** Shows the plan as soon as it is known (empty or not). */
    readonly show?: (planned: Report) => Effect.Effect<void, E, R>
    /** Asks whether to act on the plan; true to act. */
    readonly confirm: (planned: Report) => Effect.Effect<boolean, E, R>
  }
): Effect.Effect<Outcome<Report>, ClientError | E, R> =>
  Effect.gen(function* () {
    const planned = yield* cleanup.plan
    if (options.show !== undefined) yield* options.show(planned)
    if (cleanup.isEmpty(planned.plan)) return { _tag: "Nothing", planned } as const
    if (options.dryRun === true) return { _tag: "DryRun", planned } as const
    if (!(yield* options.confirm(planned))) return { _tag: "Declined", planned } as const
    const report = yield* cleanup.act(planned.plan)
    return { _tag: "Done", planned, report, failures: cleanup.failures(report) } as const
  })
