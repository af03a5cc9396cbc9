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

/**
 * A keep-alive connection that made one request with the token and stays
 * busy (one more request every HOLD_INTERVAL_MS) until `release()`; then it
 * is idle, and `closed` resolves when the daemon ends it. Busy while held, so
 * a slow machine cannot let the daemon end it before the test has used it.
 */
export const heldConnection = (
  previewPort: number,
  host: string,
  token: string
): Promise<{ readonly closed: Promise<void>; readonly release: () => void }> =>
  new Promise((resolve, reject) => {
    const socket = connect(previewPort, "127.0.0.1")
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    const ask = () => socket.write(`GET / HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    const busy = setInterval(ask, HOLD_INTERVAL_MS)
    const release = () => clearInterval(busy)
    socket.once("close", release)
    socket.once("error", (error) => {
      release()
      reject(error)
    })
    socket.once("data", () => resolve({ closed, release }))
    ask()
  })
