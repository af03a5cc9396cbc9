import { type ChosenEngine, engineAddress, type Sandbox, SandboxConflict } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type { ContainerRuntimeShape } from "./ContainerRuntime.ts"
import type { RuntimeError } from "./Errors.ts"

export interface EnginesShape {
  /** The engine new sandboxes are made on (read at start), and where its address came from. */
  readonly chosen: ChosenEngine
  /** `chosen` as rows record it: null for the local socket. */
  readonly current: string | null
  /**
   * The runtime of the engine a row records. The configured engine's is
   * ContainerRuntime; another's is made on first use and kept (a few at
   * most). Another engine that does not answer a ping fails with a
   * RuntimeError naming its address: its own sandboxes fail closed, the
   * others keep working.
   */
  readonly runtimeFor: (engine: string | null) => Effect.Effect<ContainerRuntimeShape, RuntimeError>
}

/**
 * Every Docker engine prbox has sandboxes on: rows left on an engine that is
 * no longer the configured one stay listed, and are stopped, removed and
 * reconciled on their own engine while it can be reached.
 */
export class Engines extends Context.Service<Engines, EnginesShape>()("prbox/engine/Engines") {}

/**
 * A row left on an engine that is no longer the configured one is stopped,
 * removed and reconciled there, but nothing new runs on it (restart,
 * rebuild, exec, files, jobs): this refusal says so. Undefined for the
 * configured engine's rows.
 */
export const otherEngineRefusal = (engines: EnginesShape, row: Sandbox): SandboxConflict | undefined =>
  row.engine === engines.current
    ? undefined
    : new SandboxConflict({
        id: row.id,
        reason: `it lives on the Docker engine ${engineAddress(row.engine)}, not on ${engines.chosen.address} (${engines.chosen.source}) where prbox runs sandboxes now: remove it with \`prbox rm ${row.id}\`, or choose that engine again`
      })
