import type { SandboxConflict, SandboxId, SandboxNotFound } from "@prbox/domain"
import { Context, type Effect, type Scope } from "effect"
import type { CommandPipe } from "../ContainerRuntime.ts"
import type { RuntimeError, StoreFailure } from "../Errors.ts"

/** One SSH connection's bytes: what the client sends goes to `input`, what the server says comes from `output`. */
export type SshConnection = Pick<CommandPipe, "input" | "output">

/**
 * SSH into a running sandbox without a listening port: prbox's SSH server
 * (node/server/SshServer.cjs) run per connection inside the container as the
 * sandbox user, its stdin and stdout the connection. The daemon's socket is
 * the authentication; the host key is the sandbox's own, pinned in the
 * `known_hosts` file prbox owns.
 */
export interface SshShape {
  /**
   * Starts a server for one connection; closing the scope ends it. The
   * connection counts as activity while it is open. SandboxConflict (with
   * the `prbox restart` hint) when the sandbox is not running.
   */
  readonly open: (
    id: SandboxId
  ) => Effect.Effect<SshConnection, SandboxNotFound | SandboxConflict | RuntimeError | StoreFailure, Scope.Scope>
  /** The `known_hosts` file prbox owns (`<id>.prbox ssh-ed25519 …` per sandbox with a host key). */
  readonly knownHostsFile: string
}

export class Ssh extends Context.Service<Ssh, SshShape>()("prbox/engine/Ssh") {}
