import { spawn } from "node:child_process"
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  answers,
  call,
  type Daemon,
  makeHome,
  rawConnection,
  removeHome,
  socketOf,
  spawnDaemon,
  startDaemon,
  until
} from "./support.ts"

const limits = {
  PRBOXD_MAX_BODY_BYTES: "4096",
  PRBOXD_REQUEST_TIMEOUT_MS: "3000",
  PRBOXD_HEADERS_TIMEOUT_MS: "3000",
  PRBOXD_MAX_REQUESTS: "2",
  PRBOXD_MAX_STREAMS: "2"
}

const mode = (path: string) => statSync(path).mode & 0o777

let home: string
let socketPath: string
let daemon: Daemon

beforeAll(async () => {
  home = makeHome("robust")
  socketPath = socketOf(home)
  daemon = await startDaemon(home, limits)
})

afterAll(async () => {
  await daemon?.stop()
  removeHome(home)
})

const health = async () =>
  (await call(socketPath, { path: "/v1/health" })).json() as { requests: number; streams: number }

describe("the daemon's files", () => {
  it("keeps its directories 0700 and its socket, lock and log 0600", () => {
    expect(mode(home)).toBe(0o700)
    expect(mode(join(home, "run"))).toBe(0o700)
    expect(mode(join(home, "logs"))).toBe(0o700)
    expect(mode(socketPath)).toBe(0o600)
    expect(statSync(socketPath).isSocket()).toBe(true)
    expect(mode(join(home, "run", "prboxd.lock"))).toBe(0o600)
    expect(readFileSync(join(home, "run", "prboxd.lock"), "utf8").trim()).toBe(String(daemon.pid))
    expect(mode(join(home, "logs", "prboxd.log"))).toBe(0o600)
    expect(mode(join(home, "prbox.db"))).toBe(0o600)
  })
})

describe("request bounds", () => {
  it("answers an oversized body with 413 before reading it", async () => {
    const answer = await call(socketPath, {
      method: "POST",
      path: "/v1/sandboxes",
      body: JSON.stringify({ input: "x".repeat(8192) })
    })
    expect(answer.status).toBe(413)
    expect(answer.json()).toMatchObject({ _tag: "PayloadTooLarge" })
    expect(await answers(socketPath)).toBe(true)
  })

  it("refuses a chunked body it cannot bound up front with 411", async () => {
    const connection = rawConnection(socketPath)
    connection.write(
      "POST /v1/sandboxes HTTP/1.1\r\nHost: prboxd\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    await until("an answer", () => connection.received().includes("\r\n\r\n"))
    expect(connection.received()).toMatch(/^HTTP\/1\.1 411 /)
    connection.destroy()
  })

  it("answers a body that trickles past the deadline with 408", async () => {
    const connection = rawConnection(socketPath)
    connection.write(
      'POST /v1/sandboxes HTTP/1.1\r\nHost: prboxd\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"inp'
    )
    await until("the 408", () => connection.received().length > 0, { timeoutMs: 15_000 })
    expect(connection.received()).toMatch(/^HTTP\/1\.1 408 /)
    await until("the connection to close", () => connection.closed())
    // Its slot is free again.
    await until("no request in flight", async () => (await health()).requests === 0)
  })

  it("answers requests over the cap with 503 and Retry-After, and still answers health", async () => {
    // Two requests stall after the daemon accepted them (it sent 100 Continue): the cap is reached.
    const stalled = [rawConnection(socketPath), rawConnection(socketPath)]
    for (const connection of stalled) {
      connection.write(
        "POST /v1/sandboxes HTTP/1.1\r\nHost: prboxd\r\nContent-Type: application/json\r\nContent-Length: 20\r\nExpect: 100-continue\r\n\r\n"
      )
    }
    await until("both requests to be accepted", () =>
      stalled.every((connection) => connection.received().startsWith("HTTP/1.1 100 Continue"))
    )
    const refused = await call(socketPath, { path: "/v1/sandboxes" })
    expect(refused.status).toBe(503)
    expect(refused.headers["retry-after"]).toBe("1")
    expect(refused.json()).toMatchObject({ _tag: "Busy" })
    const probe = await call(socketPath, { path: "/v1/health" })
    expect(probe.status).toBe(200)
    expect(probe.json()).toMatchObject({ status: "ok", requests: 2 })
    for (const connection of stalled) connection.destroy()
    await until("the slots to be free", async () => (await health()).requests === 0)
    expect((await call(socketPath, { path: "/v1/sandboxes" })).status).toBe(200)
  })

  it("caps event streams separately from requests", async () => {
    const streams = [rawConnection(socketPath), rawConnection(socketPath)]
    for (const connection of streams) connection.write("GET /v1/events HTTP/1.1\r\nHost: prboxd\r\n\r\n")
    await until("both streams to open", () =>
      streams.every((connection) => connection.received().startsWith("HTTP/1.1 200"))
    )
    const third = await call(socketPath, { path: "/v1/events" })
    expect(third.status).toBe(503)
    expect(third.json()).toMatchObject({ _tag: "Busy" })
    // Streams do not count against ordinary requests.
    expect((await call(socketPath, { path: "/v1/sandboxes" })).status).toBe(200)
    expect(await health()).toMatchObject({ streams: 2, requests: 0 })
    for (const connection of streams) connection.destroy()
    await until("the streams to close", async () => (await health()).streams === 0)
  })
})

describe("malformed requests", () => {
  const cases: ReadonlyArray<{
    readonly name: string
    readonly method: string
    readonly path: string
    readonly body?: string
    readonly message: RegExp
  }> = [
    { name: "malformed JSON", method: "POST", path: "/v1/sandboxes", body: "{bad", message: /valid JSON body/ },
    {
      name: "a wrong type",
      method: "POST",
      path: "/v1/sandboxes",
      body: '{"input": 5}',
      message: /Expected string[\s\S]*input/
    },
    { name: "a missing field", method: "POST", path: "/v1/sandboxes", body: "{}", message: /input/ },
    {
      name: "an empty argv",
      method: "POST",
      path: "/v1/sandboxes/abcdefghijkl/exec",
      body: '{"argv": []}',
      message: /argv/
    },
    { name: "a malformed id", method: "GET", path: "/v1/sandboxes/NOT-AN-ID", message: /path[\s\S]*id/ },
    { name: "a wrong query type", method: "GET", path: "/v1/sandboxes?all=maybe", message: /query[\s\S]*all/ }
  ]
  for (const { name, method, path, body, message } of cases) {
    it(`answers ${name} with 400 and what is wrong`, async () => {
      const answer = await call(socketPath, { method, path, ...(body === undefined ? {} : { body }) })
      expect(answer.status).toBe(400)
      const error = answer.json() as { _tag: string; message: string }
      expect(error._tag).toBe("BadRequest")
      expect(error.message).toMatch(message)
    })
  }

  it("answers an unknown route with 404 and an unknown sandbox with NotFound", async () => {
    const route = await call(socketPath, { path: "/v1/nothing" })
    expect(route.status).toBe(404)
    expect(route.json()).toMatchObject({ _tag: "NotFound" })
    const sandbox = await call(socketPath, { path: "/v1/sandboxes/abcdefghijkl" })
    expect(sandbox.status).toBe(404)
    expect(sandbox.json()).toEqual({ _tag: "NotFound", message: "no sandbox with id abcdefghijkl" })
  })
})

describe("one daemon per PRBOX_HOME", () => {
  it("refuses a second daemon on the same home and keeps the first", async () => {
    const second = spawnDaemon(home, limits)
    const { code } = await second.exit
    expect(code).toBe(1)
    expect(second.output()).toContain("already running")
    expect(second.output()).toContain(String(daemon.pid))
    expect(second.output()).not.toMatch(/\n\s+at /)
    expect(await answers(socketPath)).toBe(true)
    expect(readFileSync(join(home, "run", "prboxd.lock"), "utf8").trim()).toBe(String(daemon.pid))
  })

  it("replaces a stale socket and a stale lock left by a dead daemon", async () => {
    const other = makeHome("stale")
    try {
      const sock = socketOf(other)
      // A process that listens on the socket path and is killed: the file stays, nothing answers.
      const holder = spawn(process.execPath, [
        "-e",
        `require("fs").mkdirSync(${JSON.stringify(join(other, "run"))}, { recursive: true, mode: 0o700 }); require("net").createServer().listen(${JSON.stringify(sock)}, () => console.log("listening"))`
      ])
      await new Promise<void>((resolve) => holder.stdout.once("data", () => resolve()))
      const holderExit = new Promise((resolve) => holder.on("exit", resolve))
      holder.kill("SIGKILL")
      await holderExit
      expect(existsSync(sock)).toBe(true)
      expect(await answers(sock)).toBe(false)
      // A lock naming a process that no longer exists.
      const dead = spawn(process.execPath, ["-e", ""])
      const deadPid = dead.pid ?? 0
      await new Promise((resolve) => dead.on("exit", resolve))
      writeFileSync(join(other, "run", "prboxd.lock"), `${deadPid}\n`, { mode: 0o600 })

      const fresh = await startDaemon(other)
      try {
        expect(mode(sock)).toBe(0o600)
        expect(readFileSync(join(other, "run", "prboxd.lock"), "utf8").trim()).toBe(String(fresh.pid))
      } finally {
        const { code } = await fresh.stop()
        expect(code).toBe(0)
      }
      // A clean stop leaves neither a socket nor a lock behind.
      expect(existsSync(sock)).toBe(false)
      expect(existsSync(join(other, "run", "prboxd.lock"))).toBe(false)
    } finally {
      removeHome(other)
    }
  })
})
