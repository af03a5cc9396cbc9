import type { SandboxConflict, SandboxId, SandboxNotFound } from "@prbox/domain"
import { Context, type Effect, type Scope } from "effect"
import type { CommandPipe } from "../ContainerRuntime.ts"
import type { RuntimeError, StoreFailure } from "../Errors.ts"

/**
 * One SSH connection. `Piped`: its bytes go through the daemon (what the
 * client sends to `input`, what the server says from `output`). `Dialled`:
 * the server dialled the client's own socket and the bytes go there; the
 * daemon only holds the server, whose `ended` output ends when it does.
 */
export type SshConnection =
  | ({ readonly _tag: "Piped" } & Pick<CommandPipe, "input" | "output">)
  | { readonly _tag: "Dialled"; readonly ended: CommandPipe["output"] }

/**
 * The name of a socket a client listens at in the sandbox's folder of
 * sockets (domain `SandboxFolders.sockets`) for its server to dial: made
 * by the client, so checked before it goes anywhere.
 */
export const SSH_SOCKET_NAME = /^[0-9a-f]{24}\.sock$/

/**
 * SSH into a running sandbox without a listening port: prbox's SSH server
 * (node/server/SshServer.cjs) run per connection inside the container as the
 * sandbox user, the connection a socket the client listens at in the
 * sandbox's folder of sockets (read-only in the container), else the
 * server's stdin and stdout. The daemon's socket is the authentication; the
 * host key is the sandbox's own, pinned in the `known_hosts` file prbox owns.
 */
export interface SshShape {
  /**
   * Starts a server for one connection, told to dial `socket` (a name
   * matching SSH_SOCKET_NAME) where the sandbox has its folder of sockets;
   * closing the scope ends it. The connection counts as activity while it
   * is open. SandboxConflict (with the `prbox restart` hint) when the
   * sandbox is not running.
   */
  readonly open: (
    id: SandboxId,
    socket: string | undefined
  ) => Effect.Effect<SshConnection, SandboxNotFound | SandboxConflict | RuntimeError | StoreFailure, Scope.Scope>
  /** The `known_hosts` file prbox owns (`<id>.prbox ssh-ed25519 …` per sandbox with a host key). */
  readonly knownHostsFile: string
}

export class Ssh extends Context.Service<Ssh, SshShape>()("prbox/engine/Ssh") {}
