import type { Socket } from "node:net"

/**
 * The head of the first HTTP request on a preview connection: enough to route
 * and authorize it. The head's bytes are forwarded as they came (the host
 * form) or with a new target (the path form); whatever follows is the app's.
 */
export interface RequestHead {
  readonly method: string
  readonly target: string
  readonly version: string
  /** In order, names as sent. */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly raw: Buffer
}

export type HeadResult =
  | { readonly _tag: "Head"; readonly head: RequestHead; readonly rest: Buffer }
  | { readonly _tag: "Invalid"; readonly reason: string }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Closed" }

const END = Buffer.from("\r\n\r\n")
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) (HTTP\/1\.[01])$/

/** The value of a header; undefined when absent. Repeated headers are joined with ", " (cookies with "; "). */
export const header = (head: RequestHead, name: string): string | undefined => {
  const wanted = name.toLowerCase()
  const values = head.headers.filter(([key]) => key.toLowerCase() === wanted).map(([, value]) => value)
  return values.length === 0 ? undefined : values.join(wanted === "cookie" ? "; " : ", ")
}

/** How many times a header is present (a second Host is refused: the app could route by the other one). */
export const headerCount = (head: RequestHead, name: string): number =>
  head.headers.filter(([key]) => key.toLowerCase() === name.toLowerCase()).length

/**
 * Parses a request head from `bytes`: undefined while it is incomplete. Strict
 * on purpose: CRLF line ends, a token before each colon, no folded lines.
 */
export const parseHead = (bytes: Buffer, maxBytes: number): HeadResult | undefined => {
  const end = bytes.indexOf(END)
  if (end === -1) return bytes.length > maxBytes ? { _tag: "TooLarge" } : undefined
  if (end + END.length > maxBytes) return { _tag: "TooLarge" }
  const lines = bytes.subarray(0, end).toString("latin1").split("\r\n")
  const match = REQUEST_LINE.exec(lines[0] ?? "")
  if (match === null) return { _tag: "Invalid", reason: "malformed request line" }
  const headers: Array<readonly [string, string]> = []
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":")
    const name = colon > 0 ? line.slice(0, colon) : ""
    if (!TOKEN.test(name) || line.includes("\n") || line.includes("\r")) {
      return { _tag: "Invalid", reason: "malformed header line" }
    }
    headers.push([name, line.slice(colon + 1).trim()])
  }
  const [, method = "", target = "", version = ""] = match
  return {
    _tag: "Head",
    head: { method, target, version, headers, raw: bytes.subarray(0, end + END.length) },
    rest: bytes.subarray(end + END.length)
  }
}

/** The head with another target and some headers replaced (names compared without case), as bytes. */
export const rewriteHead = (
  head: RequestHead,
  changes: { readonly target: string; readonly set: Readonly<Record<string, string>> }
): Buffer => {
  const replaced = new Set(Object.keys(changes.set).map((name) => name.toLowerCase()))
  const lines = [
    `${head.method} ${changes.target} ${head.version}`,
    ...head.headers.filter(([name]) => !replaced.has(name.toLowerCase())).map(([name, value]) => `${name}: ${value}`),
    ...Object.entries(changes.set).map(([name, value]) => `${name}: ${value}`)
  ]
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1")
}

/**
 * Reads the first request head off a connection within `timeoutMs`. The socket
 * is paused afterwards; bytes past the head come back as `rest`.
 */
export const readHead = (socket: Socket, maxBytes: number, timeoutMs: number): Promise<HeadResult> =>
  new Promise((resolve) => {
    let buffered = Buffer.alloc(0)
    const finish = (result: HeadResult) => {
      clearTimeout(timer)
      socket.off("data", onData)
      socket.off("end", onClosed)
      socket.off("close", onClosed)
      socket.off("error", onClosed)
      socket.pause()
      resolve(result)
    }
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      const result = parseHead(buffered, maxBytes)
      if (result !== undefined) finish(result)
    }
    const onClosed = () => finish({ _tag: "Closed" })
    const timer = setTimeout(onClosed, timeoutMs)
    socket.on("data", onData)
    socket.on("end", onClosed)
    socket.on("close", onClosed)
    socket.on("error", onClosed)
  })

/** Reads exactly `length` body bytes (some may already be in `start`) within `timeoutMs`; undefined if cut short. */
export const readBody = (
  socket: Socket,
  start: Buffer,
  length: number,
  timeoutMs: number
): Promise<Buffer | undefined> =>
  new Promise((resolve) => {
    let buffered = start
    const finish = (result: Buffer | undefined) => {
      clearTimeout(timer)
      socket.off("data", onData)
      socket.off("close", onClosed)
      socket.pause()
      resolve(result)
    }
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk])
      if (buffered.length >= length) finish(buffered.subarray(0, length))
    }
    const onClosed = () => finish(undefined)
    const timer = setTimeout(onClosed, timeoutMs)
    if (buffered.length >= length) return finish(buffered.subarray(0, length))
    socket.on("data", onData)
    socket.on("close", onClosed)
    socket.resume()
  })
