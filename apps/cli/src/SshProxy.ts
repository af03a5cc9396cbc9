import { connect } from "node:net"
import { Effect } from "effect"
import { CliFailure } from "./Exit.ts"

const MAX_HEAD = 64 * 1024

/**
 * `prbox ssh-proxy`: asks the daemon's socket for sandbox `id`'s SSH stream
 * (an HTTP upgrade) and joins it to this process's stdin and stdout, the way
 * OpenSSH runs a ProxyCommand. A refusal (no such sandbox, not running) is
 * the daemon's message on stderr and a failure, before any SSH byte.
 */
export const proxy = (socketPath: string, id: string) =>
  Effect.callback<void, CliFailure>((resume) => {
    const socket = connect(socketPath)
    let head = Buffer.alloc(0)
    const fail = (message: string, code = 1) =>
      resume(Effect.fail(new CliFailure({ tag: "SshRefused", message, code })))
    socket.on("error", (error) => fail(`cannot reach prboxd at ${socketPath}: ${error.message}`))
    socket.write(
      `POST /v1/sandboxes/${id}/ssh HTTP/1.1\r\nHost: prboxd\r\nConnection: Upgrade\r\nUpgrade: prbox-ssh\r\nContent-Length: 0\r\n\r\n`
    )
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf("\r\n\r\n")
      if (end < 0) {
        if (head.length > MAX_HEAD) fail("prboxd's answer is too long")
        return
      }
      socket.removeListener("data", onHead)
      const status = head.subarray(0, head.indexOf("\r\n")).toString("latin1")
      if (!/^HTTP\/1\.1 101 /.test(status)) {
        socket.on("data", (more: Buffer) => {
          head = Buffer.concat([head, more]).subarray(0, MAX_HEAD)
        })
        socket.on("end", () => {
          const body = head.subarray(end + 4).toString("utf8")
          let message = status
          try {
            message = (JSON.parse(body) as { message?: string }).message ?? status
          } catch {
            // Not an API error body: the status line says what there is.
          }
          fail(message)
        })
        return
      }
      const rest = head.subarray(end + 4)
      if (rest.length > 0) process.stdout.write(rest)
      socket.pipe(process.stdout)
      process.stdin.pipe(socket)
      socket.on("close", () => resume(Effect.void))
    }
    socket.on("data", onHead)
    return Effect.sync(() => socket.destroy())
  })
