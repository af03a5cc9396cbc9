import { Data } from "effect"
import { isCreateStep, type SandboxStatus } from "./SandboxStatus.ts"

/**
 * What reconcile knows about the container a row records:
 * - `none`: the row records no container;
 * - `running` / `exited`: Docker listed it (or an inspect found it) so;
 * - `unlisted`: absent from the labelled listing, which is no proof of
 *   absence (a container of schema v1 carries no labels): inspect it;
 * - `gone`: an inspect confirmed Docker no longer has it.
 */
export type RecordedContainer = "none" | "running" | "exited" | "unlisted" | "gone"

export interface DriftFacts {
  readonly status: SandboxStatus
  /** A live worker (create or restart) owns the row. */
  readonly workerPresent: boolean
  readonly container: RecordedContainer
}

/** What the drift pass does with one row and the container it records. */
export type DriftAction =
  /** Rows and Docker agree, or a worker owns the row: nothing to do. */
  | { readonly _tag: "Leave" }
  /** The recorded container is not in the listing: inspect it, then decide again. */
  | { readonly _tag: "Inspect" }
  /** A create step no worker owns will never finish: stop every container of it, `error`. */
  | { readonly _tag: "MarkOrphaned" }
  /** A stop was cut short: stop the recorded container (if any), `stopped`. */
  | { readonly _tag: "FinishStop" }
  /**
   * The container is gone: the row forgets it and ends (`stopped`, or stays
   * `error`); it keeps its host port, the URL a restart publishes on again.
   */
  | { readonly _tag: "RecordGone"; readonly to: "stopped" | "error" }
  /** It claims to run but its container exited: `stopped`. */
  | { readonly _tag: "RecordExited" }
  /** An ended row's container runs: stop it; the row stays as it is. */
  | { readonly _tag: "StopEnded" }

export const DriftAction = Data.taggedEnum<DriftAction>()

export interface DriftDecision {
  readonly action: DriftAction
  /**
   * Containers labelled with the row's id that it does not record are
   * stopped (reported one by one). Orphaning stops them itself; a worker's
   * row is left alone.
   */
  readonly stopUnrecorded: boolean
}

/** A row no worker owns, past its create steps, against its recorded container. */
const containerAction = (status: SandboxStatus, container: RecordedContainer): DriftAction => {
  if (container === "unlisted") return DriftAction.Inspect()
  if (container === "gone") return DriftAction.RecordGone({ to: status === "error" ? "error" : "stopped" })
  if (status === "stopping") return DriftAction.FinishStop()
  if (status === "running" && container === "exited") return DriftAction.RecordExited()
  if ((status === "stopped" || status === "error") && container === "running") return DriftAction.StopEnded()
  return DriftAction.Leave()
}

/** The drift table: row status × recorded container × worker present → what to do. */
export const decideDrift = (facts: DriftFacts): DriftDecision => {
  if (facts.workerPresent) return { action: DriftAction.Leave(), stopUnrecorded: false }
  if (isCreateStep(facts.status)) return { action: DriftAction.MarkOrphaned(), stopUnrecorded: false }
  return { action: containerAction(facts.status, facts.container), stopUnrecorded: true }
}

/** The error an orphaned create records: whether it got as far as a container. */
export const orphanedError = (containerId: string | null): string =>
  containerId === null ? "orphaned (no container)" : "interrupted before it was ready"

/** A labelled container no row claims: stopped if it runs, always reported; only prune removes it. */
export type UnownedAction = "StopUnowned" | "ReportUnowned"

export const decideUnowned = (running: boolean): UnownedAction => (running ? "StopUnowned" : "ReportUnowned")
