import type { PreviewPort, SandboxConflict, SandboxId, SandboxNotFound } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type { PortStream } from "../ContainerRuntime.ts"
import type {
  HostFailure,
  InvalidConfig,
  PortClosed,
  PreviewUnavailable,
  RuntimeError,
  StoreFailure,
  UnknownService
} from "../Errors.ts"

type Reach = SandboxNotFound | SandboxConflict | PreviewUnavailable | RuntimeError | HostFailure | StoreFailure

/**
 * The engine's side of previews: reaching a running sandbox's ports through
 * the runtime, the ports it declares and listens on, and who may see them.
 * The daemon's preview server is the HTTP front of it.
 */
export interface PreviewsShape {
  /** The loopback TCP port previews are served on: config.json `previewPort`, else chosen once and kept in the database. */
  readonly previewPort: number
  /**
   * A byte stream to `port` inside the running sandbox (the caller destroys it);
   * with `service`, to that port of another Compose service the app reaches by
   * name, as the host recorded the project (UnknownService otherwise, before
   * anything is dialled). SandboxConflict when the sandbox is not running (the
   * message says what to do).
   */
  readonly connect: (
    id: SandboxId,
    port: number,
    service?: string
  ) => Effect.Effect<PortStream, Reach | PortClosed | UnknownService>
  /**
   * Declared then discovered ports, with their access; discovers afresh (at
   * most about once a second). Then the other Compose services' declared
   * ports, listening when a dial to them succeeds.
   */
  readonly ports: (id: SandboxId) => Effect.Effect<ReadonlyArray<PreviewPort>, Reach | InvalidConfig>
  /** The sandbox's preview token: scripts send it as `Authorization: Bearer`, browsers get it as a cookie. */
  readonly token: (id: SandboxId) => Effect.Effect<string, SandboxNotFound | SandboxConflict | StoreFailure>
  /** Whether `credential` is the sandbox's preview token (constant time; false for an unknown sandbox). */
  readonly verifyToken: (id: SandboxId, credential: string) => Effect.Effect<boolean, StoreFailure>
  /** Whether `password` is the sandbox's access password (constant time; false for an unknown sandbox). */
  readonly verifyPassword: (id: SandboxId, password: string) => Effect.Effect<boolean, StoreFailure>
  /**
   * Opens one port of a running sandbox without auth until it stops (`open:
   * false` closes it again); with `service`, that service's port (one the app
   * reaches, else UnknownService). Each is its own: `6379` public is not `db:6379`.
   */
  readonly setPublic: (
    id: SandboxId,
    port: number,
    open: boolean,
    service?: string
  ) => Effect.Effect<void, SandboxNotFound | SandboxConflict | StoreFailure | UnknownService>
  readonly isPublic: (id: SandboxId, port: number, service?: string) => Effect.Effect<boolean>
  /** Preview traffic is activity for gc: touches the row, at most twice a minute per sandbox. */
  readonly activity: (id: SandboxId) => Effect.Effect<void>
}

export class Previews extends Context.Service<Previews, PreviewsShape>()("prbox/engine/Previews") {}
