import { connect, type Socket } from "node:net"

/**
 * The open loop's client: GET one path over a pool of keep-alive HTTP/1.1
 * connections to a Unix socket, reading each answer's status and
 * Content-Length by hand. It must cost the machine less than the daemon it
 * measures: node:http's agent and parser took twice the daemon's CPU at
 * 1,000 req/s of 112 KiB answers, and the sends it fell behind on were the
 * ones it timed. A request finding every connection busy waits for one (that
 * wait counts in its latency: it is timed from its due time by the caller).
 *
 * The daemon closes connections as any HTTP server does: one idle past its
 * keep-alive timeout (5 s), and one that sent no request within its headers
 * timeout (10 s, with a 408 first). So the pool hands requests to its
 * connections in turn (each stays in use at the rates it is used for),
 * replaces a connection the daemon closed, and sends a request again, once,
 * when its connection closed before any byte of the answer came (a GET the
 * daemon may never have read; the caller's timing includes the retry).
 * Each connection reads into one buffer of its own (`onread`): a Buffer per
 * read, 125 MiB/s of them at 1,000 answers of 129 KiB, made the generator
 * run a full collection every ~0.5 s, and its pauses were timed as the
 * daemon's latency.
 */

export interface PoolAnswer {
  readonly status: number
  readonly bytes: number
}

interface Waiter {
  readonly resolve: (answer: PoolAnswer) => void
  readonly reject: (error: Error) => void
  /** Sent once already, on a connection that closed before its answer began. */
  readonly retried: boolean
}

interface Connection {
  readonly request: (waiter: Waiter) => void
  readonly socket: Socket
}

const HEAD_END = "\r\n\r\n"
const READ_BUFFER_BYTES = 64 * 1024

/**
 * One connection answering one request at a time; `onIdle` hands it the next.
 * `onGone` is called once when it closes, with the request it was sent that
 * got no byte of an answer (if any): the pool decides whether to send it again.
 */
const open = (
  socketPath: string,
  path: string,
  onIdle: (connection: Connection) => void,
  onGone: (connection: Connection, unanswered: Waiter | undefined, error: Error) => void
): Promise<Connection> =>
  new Promise((resolve, reject) => {
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES)
    const socket = connect({
      path: socketPath,
      onread: {
        buffer: readBuffer,
        callback: (size) => {
          onChunk(readBuffer.subarray(0, size))
          return true
        }
      }
    })
    const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`, "latin1")
    let current: Waiter | undefined
    let head: Buffer | null = null
    let status = 0
    let length = 0
    let remaining = -1
    let failure: Error | undefined
    let connected = false
    const fail = (error: Error) => {
      failure ??= error
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
    // `chunk` is the read buffer's, valid only until the next read: the head is read where it lies, and
    // copied only when a read ends inside it (a copy of every first read was 64 MiB/s of garbage).
    const onChunk = (chunk: Buffer) => {
      // An answer to no request: the daemon's 408 before it closes a connection that sent none.
      if (current === undefined) return socket.destroy()
      let body = chunk
      if (remaining < 0) {
        const seen = head === null ? chunk : Buffer.concat([head, chunk])
        const end = seen.indexOf(HEAD_END)
        if (end < 0) {
          head = seen === chunk ? Buffer.from(chunk) : seen
          return
        }
        const text = seen.toString("latin1", 0, end)
        const declared = /\r\ncontent-length:\s*(\d+)/i.exec(text)
        if (declared === null) return fail(new Error(`GET ${path}: an answer without a content-length`))
        status = Number(text.slice(9, 12))
        length = Number(declared[1])
        remaining = length
        body = seen.subarray(end + HEAD_END.length)
        head = null
      }
      remaining -= body.length
      if (remaining > 0) return
      if (remaining < 0) return fail(new Error(`GET ${path}: more bytes than the content-length`))
      remaining = -1
      const waiter = current
      current = undefined
      waiter.resolve({ status, bytes: length })
      onIdle(connection)
    }
    socket.once("connect", () => {
      connected = true
      resolve(connection)
    })
    socket.on("error", (error) => {
      failure ??= error
      reject(error)
    })
    socket.on("close", () => {
      // One that never connected is the caller's rejected promise, not a connection gone.
      if (!connected) return
      const error = failure ?? new Error(`GET ${path}: the daemon closed the connection`)
      const waiter = current
      current = undefined
      const begun = head !== null || remaining >= 0
      if (waiter !== undefined && begun) waiter.reject(error)
      onGone(connection, begun ? undefined : waiter, error)
    })
  })

/**
 * `connections` open connections to `socketPath`, each asking `GET path`;
 * `close` ends them. Should a replacement fail to connect (the daemon gone),
 * every waiting and later request fails with that error.
 */
export const socketPool = async (socketPath: string, path: string, connections: number) => {
  const idle: Array<Connection> = []
  const queued: Array<Waiter> = []
  const live = new Set<Connection>()
  let broken: Error | undefined
  let closed = false
  const onIdle = (connection: Connection) => {
    const next = queued.shift()
    if (next === undefined) idle.push(connection)
    else connection.request(next)
  }
  /** To the longest idle connection (so every one stays in use and none idles out), else first or last in line. */
  const send = (waiter: Waiter, first: boolean) => {
    const connection = idle.shift()
    if (connection !== undefined) connection.request(waiter)
    else if (first) queued.unshift(waiter)
    else queued.push(waiter)
  }
  const failAll = (error: Error) => {
    broken ??= error
    for (const waiter of queued.splice(0)) waiter.reject(error)
  }
  const connectOne = async () => {
    const connection = await open(socketPath, path, onIdle, onGone)
    live.add(connection)
    if (closed) connection.socket.destroy()
    return connection
  }
  const onGone = (connection: Connection, unanswered: Waiter | undefined, error: Error) => {
    live.delete(connection)
    const at = idle.indexOf(connection)
    if (at >= 0) idle.splice(at, 1)
    if (unanswered !== undefined) {
      if (unanswered.retried || closed) unanswered.reject(error)
      else send({ ...unanswered, retried: true }, true)
    }
    if (closed) return
    connectOne().then(onIdle, failAll)
  }
  idle.push(...(await Promise.all(Array.from({ length: connections }, connectOne))))
  return {
    get: (): Promise<PoolAnswer> =>
      new Promise((resolve, reject) => {
        if (broken !== undefined) reject(broken)
        else send({ resolve, reject, retried: false }, false)
      }),
    close: () => {
      closed = true
      for (const connection of live) connection.socket.destroy()
    }
  }
}
