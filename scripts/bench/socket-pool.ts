import { connect, type Socket } from "node:net"

/**
 * The open loop's client: GET one path over a pool of keep-alive HTTP/1.1
 * connections to a Unix socket, reading each answer's status and
 * Content-Length by hand. It must cost the machine less than the daemon it
 * measures: node:http's agent and parser took twice the daemon's CPU at
 * 1,000 req/s of 112 KiB answers, and the sends it fell behind on were the
 * ones it timed. A request finding every connection busy waits for one (that
 * wait counts in its latency: it is timed from its due time by the caller).
 */

export interface PoolAnswer {
  readonly status: number
  readonly bytes: number
}

interface Waiter {
  readonly resolve: (answer: PoolAnswer) => void
  readonly reject: (error: Error) => void
}

interface Connection {
  readonly request: (waiter: Waiter) => void
  readonly socket: Socket
}

const HEAD_END = "\r\n\r\n"

/** One connection answering one request at a time; `onIdle` hands it the next. */
const open = (
  socketPath: string,
  path: string,
  onIdle: (connection: Connection) => void,
  onGone: (connection: Connection, error: Error) => void
): Promise<Connection> =>
  new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath })
    const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`, "latin1")
    let current: Waiter | undefined
    let head: Buffer | null = null
    let status = 0
    let length = 0
    let remaining = -1
    const fail = (error: Error) => {
      const waiter = current
      current = undefined
      waiter?.reject(error)
      socket.destroy()
    }
    const connection: Connection = {
      socket,
      request: (waiter) => {
        current = waiter
        socket.write(request)
      }
    }
    socket.on("data", (chunk: Buffer) => {
      let body = chunk
      if (remaining < 0) {
        head = head === null ? chunk : Buffer.concat([head, chunk])
        const end = head.indexOf(HEAD_END)
        if (end < 0) return
        const text = head.toString("latin1", 0, end)
        const declared = /\r\ncontent-length:\s*(\d+)/i.exec(text)
        if (declared === null) return fail(new Error(`GET ${path}: an answer without a content-length`))
        status = Number(text.slice(9, 12))
        length = Number(declared[1])
        remaining = length
        body = head.subarray(end + HEAD_END.length)
        head = null
      }
      remaining -= body.length
      if (remaining > 0) return
      if (remaining < 0) return fail(new Error(`GET ${path}: more bytes than the content-length`))
      remaining = -1
      const waiter = current
      current = undefined
      waiter?.resolve({ status, bytes: length })
      onIdle(connection)
    })
    socket.once("connect", () => resolve(connection))
    socket.on("error", (error) => (current === undefined ? reject(error) : fail(error)))
    socket.on("close", () => {
      const error = new Error(`GET ${path}: the daemon closed the connection`)
      fail(error)
      onGone(connection, error)
    })
  })

/** `connections` open connections to `socketPath`, each asking `GET path`; `close` ends them. */
export const socketPool = async (socketPath: string, path: string, connections: number) => {
  const idle: Array<Connection> = []
  const queued: Array<Waiter> = []
  const onIdle = (connection: Connection) => {
    const next = queued.shift()
    if (next === undefined) idle.push(connection)
    else connection.request(next)
  }
  const live = new Set<Connection>()
  // A connection gone is out of the pool; with none left, every queued request fails (none waits forever).
  const onGone = (connection: Connection, error: Error) => {
    live.delete(connection)
    const at = idle.indexOf(connection)
    if (at >= 0) idle.splice(at, 1)
    if (live.size === 0) for (const waiter of queued.splice(0)) waiter.reject(error)
  }
  const all = await Promise.all(Array.from({ length: connections }, () => open(socketPath, path, onIdle, onGone)))
  for (const connection of all) live.add(connection)
  idle.push(...all)
  return {
    get: (): Promise<PoolAnswer> =>
      new Promise((resolve, reject) => {
        const connection = idle.pop()
        if (live.size === 0) reject(new Error(`GET ${path}: every connection was closed`))
        else if (connection === undefined) queued.push({ resolve, reject })
        else connection.request({ resolve, reject })
      }),
    close: () => {
      for (const connection of all) connection.socket.destroy()
    }
  }
}
