import { createServer, type Server, type Socket } from "node:net"
import type { Duplex } from "node:stream"
import { Effect, type Scope } from "effect"
import { EngineUnavailable, PortInUse } from "../DockerError.ts"

/** Opens the channel one accepted connection is carried over (SshTransport's forward to the remote port). */
type OpenChannel = () => Promise<Duplex>

const forwardTo = (openChannel: OpenChannel, accepted: Set<Socket>) => (socket: Socket) => {
  accepted.add(socket)
  socket.on("close", () => accepted.delete(socket))
  socket.on("error", () => socket.destroy())
  openChannel().then(
    (channel) => {
      channel.on("error", () => socket.destroy())
      channel.on("close", () => socket.destroy())
      socket.on("close", () => channel.destroy())
      socket.pipe(channel).pipe(socket)
    },
    () => socket.destroy()
  )
}

/**
 * A port forward's listener (SshTransport's `forwardPort`): listens on this
 * machine's 127.0.0.1 (`localPort`, or a free port) until the scope closes,
 * each accepted connection carried over a channel `openChannel` opens.
 */
export const listenForward = (
  openChannel: OpenChannel,
  localPort: number | undefined
): Effect.Effect<{ readonly localPort: number }, EngineUnavailable | PortInUse, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Server; readonly accepted: Set<Socket> }, EngineUnavailable | PortInUse>(
      (resume) => {
        const accepted = new Set<Socket>()
        const server = createServer(forwardTo(openChannel, accepted))
        server.once("error", (error: Error & { readonly code?: string }) => {
          const fields = {
            operation: "engine.forwardPort",
            detail: `cannot listen on 127.0.0.1:${localPort ?? 0}: ${error.message}`
          }
          resume(Effect.fail(error.code === "EADDRINUSE" ? new PortInUse(fields) : new EngineUnavailable(fields)))
        })
        server.listen(localPort ?? 0, "127.0.0.1", () => resume(Effect.succeed({ server, accepted })))
      }
    ),
    // Open connections end with the forward: `close` alone would wait for them.
    ({ server, accepted }) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
        for (const socket of accepted) socket.destroy()
      })
  ).pipe(
    Effect.map(({ server }) => {
      const bound = server.address()
      return { localPort: typeof bound === "object" && bound !== null ? bound.port : 0 }
    })
  )
