import { symlinkSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:net"
import { join } from "node:path"
import { PortList } from "@prbox/protocol"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { startPreviewAppArgv, stopPreviewAppArgv } from "../../../scripts/testing/preview-app.ts"
import { call, decode, makeHome, socketOf } from "./support.ts"

/**
 * A PRBOX_HOME whose sandboxes run the code-server test image with prbox's
 * code-server distribution mounted (the tests' prebuilt one, not built again).
 */
export const previewHome = (prefix: string, config: Record<string, unknown> = {}): string => {
  const home = makeHome(prefix, { image: imageTag(codeServerImage), healthTimeoutSeconds: 120, ...config })
  const dist = process.env.PRBOX_TEST_CODE_SERVER_DIST
  if (dist === undefined) throw new Error("PRBOX_TEST_CODE_SERVER_DIST is not set (the global setup sets it)")
  symlinkSync(dist, join(home, "code-server"))
  return home
}

const exec = async (home: string, id: string, argv: ReadonlyArray<string>) => {
  const answer = await call(socketOf(home), {
    method: "POST",
    path: `/v1/sandboxes/${id}/exec`,
    body: JSON.stringify({ argv })
  })
  const result = answer.json() as { exitCode?: number; output?: string }
  if (answer.status !== 200 || result.exitCode !== 0) throw new Error(`exec failed: ${answer.text}`)
}

/** Starts the preview app in the sandbox on `host:port`; resolves once it listens. */
export const startApp = (home: string, id: string, port: number, host: string, name: string) =>
  exec(home, id, startPreviewAppArgv({ port, host, name }))

export const stopApp = (home: string, id: string, port: number) => exec(home, id, stopPreviewAppArgv(port))

export const portsOf = async (home: string, id: string): Promise<PortList> => {
  const answer = await call(socketOf(home), { path: `/v1/sandboxes/${id}/ports` })
  if (answer.status !== 200) throw new Error(`ports failed: ${answer.text}`)
  return decode(PortList, answer.text)
}

export const tokenOf = async (home: string, id: string): Promise<string> => {
  const answer = await call(socketOf(home), { path: `/v1/sandboxes/${id}/preview-token` })
  if (answer.status !== 200) throw new Error(`preview-token failed: ${answer.text}`)
  return (answer.json() as { token: string }).token
}

export interface PreviewAnswer {
  readonly status: number
  readonly headers: Record<string, string | ReadonlyArray<string> | undefined>
  readonly text: string
}

/** One request to the preview server on 127.0.0.1, with any Host header (no DNS needed). */
export const preview = (
  previewPort: number,
  options: { readonly host: string; readonly path?: string; readonly headers?: Record<string, string> }
): Promise<PreviewAnswer> =>
  new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: previewPort,
        path: options.path ?? "/",
        headers: { ...options.headers, host: options.host },
        agent: false
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8") })
        )
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    req.end()
  })

/** The preview host of a sandbox's port. */
export const hostOf = (id: string, port: number, previewPort: number) => `${port}.${id}.localhost:${previewPort}`

/** How often a held connection sends another request: well inside the tests' idle timeout, so none ends early. */
const HOLD_INTERVAL_MS = 500

interface HeldConnection {
  /** The status of the first answer on it: 200 when the app answered, 503 when the daemon's cap refused it. */
  readonly status: number
  /** Its Retry-After in seconds, if it had one. */
  readonly retryAfter: number | undefined
  readonly closed: Promise<void>
  readonly release: () => void
}

/**
 * A keep-alive connection that made one request with the token and stays
 * busy (one more request every HOLD_INTERVAL_MS) until `release()`; then it
 * is idle, and `closed` resolves when the daemon ends it. Busy while held, so
 * a slow machine cannot let the daemon end it before the test has used it.
 */
const heldConnection = (previewPort: number, host: string, token: string): Promise<HeldConnection> =>
  new Promise((resolve, reject) => {
    const socket = connect(previewPort, "127.0.0.1")
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    const ask = () => socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    const busy = setInterval(ask, HOLD_INTERVAL_MS)
    const release = () => clearInterval(busy)
    socket.once("close", () => {
      release()
      reject(new Error("the daemon closed a held connection before answering it"))
    })
    socket.once("error", (error) => {
      release()
      reject(error)
    })
    socket.once("data", (chunk: Buffer) => {
      const head = chunk.toString("latin1")
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? "NaN")
      const retryAfter = /\r\nretry-after: *(\d+)\r\n/i.exec(head)?.[1]
      resolve({ status, retryAfter: retryAfter === undefined ? undefined : Number(retryAfter), closed, release })
    })
    ask()
  })

/**
 * How often one of `holdConnections`' slots is asked at most: its retries
 * (about a second each) stay inside the tests' 3 s idle timeout, so a cap
 * that frees a slot only when the idle timer ends a connection is still caught.
 */
const HOLD_ATTEMPTS = 3

/**
 * `count` held connections, each answered by the app. An earlier request's
 * connection still counts against the sandbox's cap until the daemon sees it
 * close, a moment after its client is done with it: a connection the cap
 * refuses (503) is asked again after the Retry-After the daemon gave it, as a
 * client would, a few times at most; any other answer fails, and the
 * connections already held are released first (none keeps the cap full for
 * the tests after).
 */
export const holdConnections = async (
  previewPort: number,
  host: string,
  token: string,
  count: number
): Promise<ReadonlyArray<HeldConnection>> => {
  const hold = async (attempt: number): Promise<HeldConnection> => {
    const connection = await heldConnection(previewPort, host, token)
    if (connection.status === 200) return connection
    if (connection.status !== 503 || attempt >= HOLD_ATTEMPTS) {
      throw new Error(`a held connection was answered ${connection.status} (attempt ${attempt})`)
    }
    await connection.closed
    await new Promise((resolve) => setTimeout(resolve, (connection.retryAfter ?? 1) * 1000))
    return hold(attempt + 1)
  }
  const outcomes = await Promise.allSettled(Array.from({ length: count }, () => hold(1)))
  const held = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []))
  const failed = outcomes.find((outcome) => outcome.status === "rejected")
  if (failed === undefined) return held
  for (const connection of held) connection.release()
  throw failed.reason
}
