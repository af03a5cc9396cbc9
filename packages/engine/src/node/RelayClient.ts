import { connect, type Socket } from "node:net"
import { Effect } from "effect"

/*
 * The host side of prbox's preview relay (PreviewRelay.cjs, protocol v1):
 * one request line to the relay's published port, one status line back.
 */

/** The relay's source file, read once by the runtime and passed to the container's Node with `-e`. */
export const RELAY_SOURCE_FILE = new URL("./PreviewRelay.cjs", import.meta.url)

const MAX_STATUS_LINE = 256
const STATUS_TIMEOUT_MS = 10_000
const MAX_PORTS_TEXT = 8 * 1024 * 1024
const PORTS_TIMEOUT_MS = 10_000

export type RelayAnswer =
  /** The stream after `ok`; any bytes that came with the status line are put back. */
  | { readonly _tag: "Ok"; readonly socket: Socket }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Denied" }
  | { readonly _tag: "Failed"; readonly reason: string }
  /** Refused, reset or closed before a status line: nothing listens behind the published port (yet). */
  | { readonly _tag: "NoAnswer" }

export const connectRequest = (token: string, port: number): string => `PRBOX-RELAY/1 ${token} connect ${port}\n`
export const portsRequest = (token: string): string => `PRBOX-RELAY/1 ${token} ports\n`

// The relay runs in the sandbox: its words are shown only as short printable ASCII.
const printable = (text: string): string => text.replace(/[^\x20-\x7e]/g, "?").slice(0, 80)

const statusOf = (line: string, socket: Socket): RelayAnswer => {
  if (line === "ok") return { _tag: "Ok", socket }
  socket.destroy()
  if (line === "closed") return { _tag: "Closed" }
  if (line === "denied") return { _tag: "Denied" }
  return { _tag: "Failed", reason: printable(line.startsWith("error ") ? line.slice(6) : line) }
}

/**
 * Sends `request` to the relay at 127.0.0.1:`hostPort`; an interruption or a
 * failure destroys the socket. The status line is taken with `read()`, so an
 * `Ok` socket is left as a fresh one: nothing flows until the caller reads.
 */
export const handshake = (hostPort: number, request: string): Effect.Effect<RelayAnswer> =>
  Effect.callback<RelayAnswer>((resume) => {
    const socket = connect({ host: "127.0.0.1", port: hostPort })
    let head = Buffer.alloc(0)
    let settled = false
    const noAnswer = () => settle({ _tag: "NoAnswer" })
    const settle = (answer: RelayAnswer) => {
      if (settled) return
      settled = true
      socket.setTimeout(0)
      socket.removeListener("readable", onReadable).removeListener("error", noAnswer).removeListener("close", noAnswer)
      if (answer._tag !== "Ok") socket.destroy()
      resume(Effect.succeed(answer))
    }
    const onReadable = () => {
      for (let chunk: Buffer | null = socket.read(); chunk !== null; chunk = socket.read()) {
        head = Buffer.concat([head, chunk])
        const end = head.indexOf(10)
        if (end >= 0) {
          // Bytes after the status line are the app's: back onto the stream for the caller.
          if (end + 1 < head.length) socket.unshift(head.subarray(end + 1))
          return settle(statusOf(head.subarray(0, end).toString("latin1"), socket))
        }
        if (head.length > MAX_STATUS_LINE) return settle({ _tag: "Failed", reason: "status line too long" })
      }
    }
    socket.setTimeout(STATUS_TIMEOUT_MS, () => settle({ _tag: "Failed", reason: "no answer in time" }))
    socket.on("connect", () => socket.write(request))
    socket.on("readable", onReadable)
    socket.on("error", noAnswer)
    socket.on("close", noAnswer)
    return Effect.sync(() => {
      settled = true
      socket.destroy()
    })
  })

/** The rest of the stream as text (the `ports` answer), bounded in size and time. */
export const readToEnd = (socket: Socket): Effect.Effect<string, string> =>
  Effect.callback<string, string>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const fail = (reason: string) => {
      socket.destroy()
      resume(Effect.fail(reason))
    }
    socket.setTimeout(PORTS_TIMEOUT_MS, () => fail("no end in time"))
    socket.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_PORTS_TEXT) fail("answer too long")
      else chunks.push(chunk)
    })
    socket.on("error", () => fail("connection lost"))
    socket.on("end", () => {
      socket.destroy()
      resume(Effect.succeed(Buffer.concat(chunks).toString("latin1")))
    })
    socket.resume()
    return Effect.sync(() => socket.destroy())
  })
