import { connect } from "node:net"
import type { Duplex } from "node:stream"
import { Effect } from "effect"
import type { Loopback } from "../Docker.ts"
import { ConnectionRefused, EngineUnavailable } from "../DockerError.ts"
import type { SshTransport } from "./SshTransport.ts"

/** A local engine's 127.0.0.1 is this machine's: a plain TCP connection. */
export const localLoopback: Loopback = {
  kind: "local",
  dial: (port) =>
    Effect.callback<Duplex, ConnectionRefused | EngineUnavailable>((resume) => {
      const socket = connect({ host: "127.0.0.1", port, noDelay: true })
      const failed = (error: Error & { readonly code?: string }) => {
        const fields = { operation: "engine.dial", detail: `127.0.0.1:${port}: ${error.message}` }
        resume(
          Effect.fail(error.code === "ECONNREFUSED" ? new ConnectionRefused(fields) : new EngineUnavailable(fields))
        )
      }
      socket.once("error", failed)
      socket.once("connect", () => {
        socket.off("error", failed)
        resume(Effect.succeed(socket))
      })
      return Effect.sync(() => socket.destroy())
    })
}

/** A remote engine's 127.0.0.1, over the SSH connection its requests use. */
export const sshLoopback = (ssh: SshTransport): Loopback => ({
  kind: "ssh",
  dial: (port) => ssh.dial({ remoteHost: "127.0.0.1", remotePort: port }),
  forward: ({ localPort, remotePort }) => ssh.forwardPort({ remoteHost: "127.0.0.1", remotePort, localPort })
})
