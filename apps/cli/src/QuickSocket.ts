import { API_HEADER, servesThisApi } from "@prbox/protocol/ApiVersion"

/**
 * The fast path's requests on the daemon's socket, without effect. node:net
 * through getBuiltinModule rather than `import`: an ES import of a built-in
 * evaluates all its exports (node:http's load undici). And HTTP/1.0 by hand
 * rather than node:http, whose modules and parser cost more to load than
 * the whole answer takes: the answer is one status line, headers and a body
 * that ends when the daemon closes the connection.
 */
const { connect } = process.getBuiltinModule("node:net")

/** Longer than a loaded daemon takes to list 200 rows; a slower one is left to the full CLI and its own deadline. */
const QUIET_MS = 5_000

/** The status line and headers of an answer that starts `head`; undefined until they are whole. */
const headOf = (answer: Buffer) => {
  const end = answer.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const [status = "", ...headers] = answer.toString("latin1", 0, end).split("\r\n")
  const header = (name: string) =>
    headers
      .find((line) => line.toLowerCase().startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim()
  // A 200 from a daemon that serves this client's API (its API_HEADER).
  const ok = /^HTTP\/1\.[01] 200 /.test(status) && servesThisApi(header(API_HEADER))
  return { ok, header, body: answer.subarray(end + 4) }
}

/**
 * The body of a `200` answer of type JSON from a daemon that serves this
 * client's API (its API_HEADER), whole (as long as its content-length says),
 * or undefined.
 */
export const bodyOf = (answer: Buffer): string | undefined => {
  const head = headOf(answer)
  if (head === undefined || !head.ok) return undefined
  const { header, body } = head
  if (!(header("content-type") ?? "").startsWith("application/json")) return undefined
  if (header("transfer-encoding") !== undefined || header("content-length") !== String(body.length)) return undefined
  return body.toString("utf8")
}

const requestText = (method: string, path: string, body: string | undefined) => {
  const length =
    body === undefined ? "" : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`
  return `${method} ${path} HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n${length}\r\n${body ?? ""}`
}

/**
 * `method` `path` (with a JSON `body`) on the daemon's socket: the parsed
 * JSON of a whole 200 answer in this client's API, or undefined for anything
 * else (no socket, refused, another status or API, not JSON, a cut answer,
 * silence for QUIET_MS).
 */
export const requestJson = (socketPath: string, method: string, path: string, body?: string): Promise<unknown> =>
  new Promise((resolve) => {
    const socket = connect({ path: socketPath })
    const chunks: Array<Buffer> = []
    socket.setTimeout(QUIET_MS, () => socket.destroy())
    socket.on("connect", () => socket.write(requestText(method, path, body)))
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("end", () => {
      const text = bodyOf(Buffer.concat(chunks))
      try {
        resolve(text === undefined ? undefined : JSON.parse(text))
      } catch {
        resolve(undefined)
      }
    })
    // Refused, reset, timed out: the first resolve wins, so after `end` this changes nothing.
    socket.on("close", () => resolve(undefined))
    socket.on("error", () => resolve(undefined))
  })

/** How a followed stream ended: `done` said so, the daemon could not be reached, or the stream ended or broke. */
export type StreamEnd = "done" | "unreachable" | "ended"

/**
 * GET `path`, a stream of JSON lines (NDJSON) in this client's API: each
 * line, parsed, to `onLine` until it answers true (`done`). Unreachable: no
 * socket or nobody listening; ended: any other end (another status, a line
 * that is not JSON, the connection closed or reset).
 */
export const followLines = (
  socketPath: string,
  path: string,
  onLine: (value: unknown) => boolean
): Promise<StreamEnd> =>
  new Promise((resolve) => {
    const socket = connect({ path: socketPath })
    let connected = false
    let head: Buffer | undefined = Buffer.alloc(0)
    // Split on newline bytes, so a character cut between two chunks is read whole.
    let rest = Buffer.alloc(0)
    const end = (how: StreamEnd) => {
      resolve(how)
      socket.destroy()
    }
    const lines = (chunk: Buffer) => {
      rest = Buffer.concat([rest, chunk])
      for (let newline = rest.indexOf(10); newline >= 0; newline = rest.indexOf(10)) {
        const line = rest.toString("utf8", 0, newline)
        rest = rest.subarray(newline + 1)
        if (line.trim() === "") continue
        let value: unknown
        try {
          value = JSON.parse(line)
        } catch {
          return end("ended")
        }
        if (onLine(value)) return end("done")
      }
    }
    socket.on("connect", () => {
      connected = true
      socket.write(requestText("GET", path, undefined))
    })
    socket.on("data", (chunk: Buffer) => {
      if (head === undefined) return lines(chunk)
      const seen = headOf(Buffer.concat([head, chunk]))
      if (seen === undefined) {
        head = Buffer.concat([head, chunk])
        return
      }
      head = undefined
      if (!seen.ok) return end("ended")
      lines(seen.body)
    })
    socket.on("close", () => resolve(connected ? "ended" : "unreachable"))
    socket.on("error", () => resolve(connected ? "ended" : "unreachable"))
  })
