import { Context } from "effect"

/** Facts about this daemon process, and the front layer's live counters. */
export interface DaemonInfoShape {
  readonly home: string
  readonly startedAt: number
  readonly inFlight: () => { readonly requests: number; readonly streams: number }
}

export class DaemonInfo extends Context.Service<DaemonInfo, DaemonInfoShape>()("prbox/daemon/DaemonInfo") {}
