import type { Duplex, Readable, Writable } from "node:stream"
import type { Effect } from "effect"
import type { RuntimeError } from "./Errors.ts"

// What the container runtime hands back for a running command or a connection: streams and their ends.

/** A command started in the background (`spawn`): its output goes to the callback as it comes. */
export interface RunningCommand {
  /** Resolves when it ended: its exit code, or null and `timedOut`/`killed` when it was killed. */
  readonly exit: Effect.Effect<
    { readonly exitCode: number | null; readonly timedOut: boolean; readonly killed: boolean },
    RuntimeError
  >
  /** Kills its process group inside the container (a command already ended is fine). */
  readonly kill: Effect.Effect<void>
}

/**
 * How the runtime reaches a sandbox's ports: prbox's relay inside the
 * container (started on first use), which accepts only this sandbox's token.
 */
export interface RelayAccess {
  /** Shared by the daemon and this container's relay only; never logged. */
  readonly token: string
  /** How to run Node inside the container (prbox's mounted code-server's, or the image's `node`). */
  readonly node: ReadonlyArray<string>
  /** Who the relay runs as (`uid:gid`): the sandbox's user, never root for an untrusted repository. */
  readonly user: string
  /**
   * The other Compose services the relay may dial by name (the host's record
   * of the project, `ReachableService`), given to it when it starts; none: only
   * the container's own ports.
   */
  readonly services?: ReadonlyArray<string>
}

/** Where a running command's stdin is written (`exec`'s `stdin`): bytes as its output asks for them, then its end. */
export interface CommandInput {
  readonly write: (chunk: Uint8Array) => void
  readonly end: () => void
}

/** A command's stdin and stdout as streams (`pipe`). */
export interface CommandPipe {
  /** Ending it ends the command's stdin. */
  readonly input: Writable
  readonly output: Readable
  /** Its exit code once its output ended. */
  readonly exitCode: Effect.Effect<number, RuntimeError>
}

/** A connection to a port inside a sandbox; the caller owns it (destroys `socket`). */
export interface PortStream {
  /** Bytes written here reach the app; its events (`close`, `error`) are the connection's. */
  readonly socket: Duplex
  /**
   * Sends what the app writes to `destination` (ended when the app ends), one
   * chunk at a time through one reused buffer: nothing is read from the app
   * until `destination` took the last chunk. Call it once; nothing flows before.
   */
  readonly pipeTo: (destination: Writable) => void
}
