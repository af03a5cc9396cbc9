import { Context, type Effect } from "effect"
import type { RuntimeError } from "./Errors.ts"

export interface Health {
  /** code-server's last heartbeat (ms since the epoch), when its `/healthz` reports one. */
  readonly lastHeartbeat: number | undefined
}

export interface CodeServerHealthShape {
  /**
   * One probe of code-server's `/healthz` at this machine's 127.0.0.1:`hostPort`
   * (the port the runtime's `start` returned); fails when it does not answer.
   */
  readonly probe: (hostPort: number) => Effect.Effect<Health, RuntimeError>
}

/**
 * Whether a sandbox's code-server answers, and its heartbeat. Plain HTTP to
 * the port `start` returned: the same for every runtime, so it is not one
 * of the runtime port's calls. See node/NodeCodeServerHealth.ts.
 */
export class CodeServerHealth extends Context.Service<CodeServerHealth, CodeServerHealthShape>()(
  "prbox/engine/CodeServerHealth"
) {}
