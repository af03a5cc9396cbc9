import { connect } from "node:net"
import { type Duplex, Writable } from "node:stream"
import { Effect } from "effect"
import type { PortStream } from "../../ContainerRuntime.ts"

/*
 * The host side of prbox's preview relay (PreviewRelay.cjs, protocol v1):
 * one request line to the relay's published port, one status line back.
 * The port is this machine's 127.0.0.1 (a local engine), or a stream the
 * engine's loopback dialled to it (a remote engine, over SSH).
 */

/** The relay's source file, read once by the runtime and passed to the container's Node with `-e`. */
export const RELAY_SOURCE_FILE = new URL("./PreviewRelay.cjs", import.meta.url)

const MAX_STATUS_LINE = 256
/** One read buffer per connection, reused for every chunk the app sends. */
const READ_BUFFER_BYTES = 64 * 1024
const STATUS_TIMEOUT_MS = 10_000
const MAX_PORTS_TEXT = 8 * 1024 * 1024
const PORTS_TIMEOUT_MS = 10_000

export type RelayAnswer =
  /** The stream after `ok`; any bytes that came with the status line come first. */
  | { readonly _tag: "Ok"; readonly stream: PortStream }
  | { readonly _tag: "Closed" }
  | { readonly _tag: "Denied" }
  | { readonly _tag: "Failed"; readonly reason: string }
  /** Refused, reset or closed before a status line: nothing listens behind the published port (yet). */
  | { readonly _tag: "NoAnswer" }

/** A Writable that hands each chunk to `take` (synchronously) and is done when ended. */
class WritableText extends Writable {
  constructor(take: (chunk: Buffer) => void) {
    super({
      write: (chunk: Buffer, _encoding, done) => {
        take(chunk)
        done()
      }
    })
  }
}

/** A request for `port` in the container, or for `service`'s (another Compose service the relay dials by name). */
export const connectRequest = (token: string, port: number, service?: string): string =>
  `PRBOX-RELAY/1 ${token} connect ${port}${service === undefined ? "" : ` ${service}`}\n`
export const portsRequest = (token: string): string => `PRBOX-RELAY/1 ${token} ports\n`

// The relay runs in the sandbox: its words are shown only as short printable ASCII.
const printable = (text: string): string => text.replace(/[^\x20-\x7e]/g, "?").slice(0, 80)

/**
 * Connects to 127.0.0.1:`target`, or takes the stream `target`, handing each
 * chunk to `read`; a `false` from it pauses the reads until `resume()`. A
 * port's socket reads into one reused buffer (Node's `onread`).
 */
const openRelay = (target: number | Duplex, read: (chunk: Buffer) => boolean): Duplex => {
  if (typeof target !== "number") {
    // What a TCP socket does by default (no half-open): an SSH channel stays open after the remote's end otherwise.
    target.once("end", () => target.end())
    target.on("data", (chunk: Buffer) => {
      // Paused before `read` runs: what it calls (a `pipeTo`) may resume the stream at once.
      target.pause()
      if (read(chunk)) target.resume()
    })
    return target
  }
  return connect({
    host: "127.0.0.1",
    port: target,
    noDelay: true,
    onread: {
      buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
      callback: (size, buffer) => read(Buffer.from(buffer.buffer, buffer.byteOffset, size))
    }
  })
}

/**
 * Sends `request` to the relay at 127.0.0.1:`target` (or over the stream
 * `target`, which it then owns); an interruption or a failure destroys the
 * connection. Reading from a port goes into one reused buffer: the status
 * line is copied out of it, and after `ok` the app's bytes flow only into the
 * destination given to `pipeTo`, the next read waiting until it took the
 * last chunk. A large download through a preview so costs no garbage per
 * chunk, where ordinary reads would allocate each one.
 */
export const handshake = (target: number | Duplex, request: string): Effect.Effect<RelayAnswer> =>
  Effect.callback<RelayAnswer>((resume) => {
    let head = Buffer.alloc(0)
    let early = Buffer.alloc(0)
    let settled = false
    let onChunk = (chunk: Buffer): boolean => {
      head = Buffer.concat([head, chunk])
      const end = head.indexOf(10)
      if (end >= 0) {
        // Bytes after the status line are the app's: kept for the destination.
        early = Buffer.from(head.subarray(end + 1))
        settle(statusOf(head.subarray(0, end).toString("latin1")))
        return false
      }
      if (head.length > MAX_STATUS_LINE) settle({ _tag: "Failed", reason: "status line too long" })
      return true
    }
    // A timer, not the socket's: an SSH channel has no idle timeout.
    const timer = setTimeout(() => settle({ _tag: "Failed", reason: "no answer in time" }), STATUS_TIMEOUT_MS)
    const socket = openRelay(target, (chunk) => onChunk(chunk))
    const pipeTo = (destination: Writable) => {
      socket.once("end", () => destination.end())
      onChunk = (chunk) => {
        destination.write(chunk, () => socket.resume())
        return false
      }
      if (early.length > 0) destination.write(early)
      socket.resume()
    }
    const statusOf = (line: string): RelayAnswer => {
      if (line === "ok") return { _tag: "Ok", stream: { socket, pipeTo } }
      if (line === "closed") return { _tag: "Closed" }
      if (line === "denied") return { _tag: "Denied" }
      return { _tag: "Failed", reason: printable(line.startsWith("error ") ? line.slice(6) : line) }
    }
    const noAnswer = () => settle({ _tag: "NoAnswer" })
    const settle = (answer: RelayAnswer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.removeListener("error", noAnswer).removeListener("close", noAnswer)
      if (answer._tag !== "Ok") socket.destroy()
      resume(Effect.succeed(answer))
    }
    // A socket still connecting sends it once connected.
    socket.write(request)
    socket.on("error", noAnswer)
    socket.on("close", noAnswer)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      socket.destroy()
    })
  })

/** The rest of the stream as text (the `ports` answer), bounded in size and time. */
export const readToEnd = (stream: PortStream): Effect.Effect<string, string> =>
  Effect.callback<string, string>((resume) => {
    const { socket } = stream
    const chunks: Array<Buffer> = []
    let size = 0
    const fail = (reason: string) => {
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.fail(reason))
    }
    const timer = setTimeout(() => fail("no end in time"), PORTS_TIMEOUT_MS)
    socket.on("error", () => fail("connection lost"))
    // The chunks share the stream's read buffer: each is copied as it comes.
    const collector = new WritableText((chunk) => {
      size += chunk.length
      if (size > MAX_PORTS_TEXT) fail("answer too long")
      else chunks.push(Buffer.from(chunk))
    })
    collector.on("finish", () => {
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(Buffer.concat(chunks).toString("latin1")))
    })
    stream.pipeTo(collector)
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })
