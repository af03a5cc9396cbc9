import { type ChildProcessByStdio, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { request } from "node:http"
import { connect } from "node:net"
import type { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PREVIEW_APP_PATH } from "../../../scripts/testing/preview-app.ts"

/**
 * The app the preview tests and `pnpm bench preview` run inside a sandbox,
 * checked here on the host with this Node: every route, and a WebSocket echo
 * with Node's own WebSocket client.
 */

type App = ChildProcessByStdio<null, Readable, Readable>

/** Starts the app on a free port; resolves once it says where it listens. */
const startApp = (args: ReadonlyArray<string>): Promise<{ readonly app: App; readonly port: number }> =>
  new Promise((resolve, reject) => {
    const app = spawn(process.execPath, [PREVIEW_APP_PATH, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    app.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const listening = /listening on [^\n]*:(\d+)\n/.exec(out)
      if (listening !== null) resolve({ app, port: Number(listening[1]) })
    })
    app.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    app.on("exit", (code) => reject(new Error(`the app exited with ${code}: ${out}`)))
  })

const exitOf = (args: ReadonlyArray<string>): Promise<{ readonly code: number | null; readonly stderr: string }> =>
  new Promise((resolve) => {
    const app = spawn(process.execPath, [PREVIEW_APP_PATH, ...args], { stdio: ["ignore", "ignore", "pipe"] })
    let stderr = ""
    app.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    app.on("exit", (code) => resolve({ code, stderr }))
  })

let app: App
let port: number

beforeAll(async () => {
  ;({ app, port } = await startApp(["--port", "0", "--host", "127.0.0.1", "--name", "probe"]))
})

afterAll(() => {
  app.kill()
})

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

const send = (method: string, path: string, body?: Buffer, headers: Record<string, string> = {}): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** VmRSS of `pid` in MiB. */
const rssMb = (pid: number): number =>
  Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024

describe("the preview app", () => {
  it("says hello at /, with the path and Host header it saw", async () => {
    const answer = await send("GET", "/", undefined, { host: "3000.abcdefabcdef.localhost:4000" })
    expect(answer.status).toBe(200)
    expect(answer.body.toString()).toBe(
      `hello from probe on 127.0.0.1:${port}\npath / host 3000.abcdefabcdef.localhost:4000\n`
    )
  })

  it("echoes a path under /path/, query included; anything else is 404", async () => {
    const echoed = await send("GET", "/path/a/b?x=1")
    expect(echoed.status).toBe(200)
    expect(echoed.body.toString().split("\n")[1]).toBe(`path /path/a/b?x=1 host 127.0.0.1:${port}`)
    const missing = await send("GET", "/elsewhere")
    expect(missing.status).toBe(404)
    expect(missing.body.toString()).toContain("/elsewhere")
  })

  it("streams /big?mb=N with its Content-Length, and refuses a bad size", async () => {
    const answer = await send("GET", "/big?mb=3")
    expect(answer.status).toBe(200)
    expect(answer.headers["content-length"]).toBe(String(3 * 2 ** 20))
    expect(answer.body.length).toBe(3 * 2 ** 20)
    expect((await send("GET", "/big?mb=x")).status).toBe(400)
  })

  it("writes /big at the reader's pace: a stalled reader leaves the app small and answering", async () => {
    const before = rssMb(app.pid ?? 0)
    const stalled = connect(port, "127.0.0.1")
    const first = new Promise<void>((resolve) => stalled.once("data", () => resolve()))
    stalled.write("GET /big?mb=10240 HTTP/1.1\r\nHost: x\r\n\r\n")
    await first
    stalled.pause()
    try {
      // Answered only once the big response's loop yields: written without waiting, the
      // whole 10 GiB is queued first.
      expect((await send("GET", "/")).status).toBe(200)
      expect(rssMb(app.pid ?? 0) - before).toBeLessThan(32)
    } finally {
      stalled.destroy()
    }
  })

  it("streams a POST /echo body back", async () => {
    const body = randomBytes(2 ** 20 + 17)
    const answer = await send("POST", "/echo", body, { "content-type": "application/x-probe" })
    expect(answer.status).toBe(200)
    expect(answer.headers["content-type"]).toBe("application/x-probe")
    expect(answer.body.equals(body)).toBe(true)
  })

  it("echoes WebSocket text and binary messages and closes cleanly", async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`)
    ws.binaryType = "arraybuffer"
    const received: Array<string | Array<number>> = []
    const closed = new Promise<{ code: number; reason: string; wasClean: boolean }>((resolve, reject) => {
      ws.onerror = () => reject(new Error("WebSocket error"))
      ws.onclose = (event) => resolve({ code: event.code, reason: event.reason, wasClean: event.wasClean })
    })
    const long = "x".repeat(1000)
    ws.onopen = () => {
      ws.send("hello")
      ws.send(long)
      ws.send(new Uint8Array([1, 2, 3]))
    }
    ws.onmessage = (event) => {
      const data = event.data as string | ArrayBuffer
      received.push(typeof data === "string" ? data : [...new Uint8Array(data)])
      if (received.length === 3) ws.close(1000, "done")
    }
    expect(await closed).toEqual({ code: 1000, reason: "done", wasClean: true })
    expect(received).toEqual(["hello", long, [1, 2, 3]])
  })

  it("answers a WebSocket ping with a pong and refuses a frame of 64 KiB with close 1009", async () => {
    const socket = connect(port, "127.0.0.1")
    let data = Buffer.alloc(0)
    const waitFor = (bytes: number) =>
      new Promise<Buffer>((resolve) => {
        const check = () => {
          if (data.length >= bytes) {
            socket.off("data", onData)
            const out = data.subarray(0, bytes)
            data = data.subarray(bytes)
            resolve(out)
          }
        }
        const onData = (chunk: Buffer) => {
          data = Buffer.concat([data, chunk])
          check()
        }
        socket.on("data", onData)
        check()
      })
    const key = randomBytes(16).toString("base64")
    socket.write(
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`
    )
    const head = await new Promise<string>((resolve) => {
      const onData = (chunk: Buffer) => {
        data = Buffer.concat([data, chunk])
        const end = data.indexOf("\r\n\r\n")
        if (end < 0) return
        socket.off("data", onData)
        resolve(data.subarray(0, end).toString())
        data = data.subarray(end + 4)
      }
      socket.on("data", onData)
    })
    expect(head.split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols")
    // A masked ping with payload "hi" (mask 1 2 3 4).
    socket.write(Buffer.from([0x89, 0x82, 1, 2, 3, 4, "h".charCodeAt(0) ^ 1, "i".charCodeAt(0) ^ 2]))
    expect([...(await waitFor(4))]).toEqual([0x8a, 2, "h".charCodeAt(0), "i".charCodeAt(0)])
    // A text frame announcing 2^16 bytes (127: 64-bit length) is answered with close 1009.
    socket.write(Buffer.from([0x81, 0xff, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4]))
    expect([...(await waitFor(4))]).toEqual([0x88, 2, 0x03, 0xf1])
    socket.destroy()
  }, 10_000)

  it("refuses a missing or bad --port with its usage and exit code 2", async () => {
    for (const args of [[], ["--port", "x"], ["--port", "70000"], ["--bogus"]]) {
      const { code, stderr } = await exitOf(args)
      expect(code).toBe(2)
      expect(stderr).toContain("usage: node preview-app.cjs --port N")
    }
  })
})
