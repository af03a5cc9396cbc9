import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { socketPool } from "../socket-pool.ts"

const BODY = "x".repeat(1000)
const scratch: Array<{ server: Server; dir: string }> = []
afterEach(async () => {
  for (const { server, dir } of scratch.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    rmSync(dir, { recursive: true, force: true })
  }
})

/**
 * A node:http server (what prboxd serves with) on a Unix socket: `handle`
 * answers or drops each request; `sockets` are its connections in order, and
 * `connected(n)` resolves once it has accepted `n` of them.
 */
const serve = async (handle: (req: IncomingMessage, res: ServerResponse, connection: number) => void) => {
  const dir = mkdtempSync(join(tmpdir(), "prbox-pool-"))
  const socketPath = join(dir, "s.sock")
  const sockets: Array<Socket> = []
  const waiting: Array<{ n: number; resolve: () => void }> = []
  const server = createServer((req, res) => handle(req, res, sockets.indexOf(req.socket)))
  server.on("connection", (socket: Socket) => {
    sockets.push(socket)
    for (const w of waiting.filter((w) => sockets.length >= w.n)) w.resolve()
  })
  scratch.push({ server, dir })
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  const connected = (n: number) =>
    new Promise<void>((resolve) => (sockets.length >= n ? resolve() : waiting.push({ n, resolve })))
  return { socketPath, server, sockets, connected }
}

const answer = (res: ServerResponse) => res.end(BODY)

describe("the open loop's connection pool (socket-pool.ts) against a server that closes connections", () => {
  it("hands requests to its connections in turn, so none sits idle while another is reused", async () => {
    const seen: Array<number> = []
    const { socketPath } = await serve((_req, res, connection) => {
      seen.push(connection)
      answer(res)
    })
    const pool = await socketPool(socketPath, "/", 3)
    for (let i = 0; i < 6; i++) expect(await pool.get()).toEqual({ status: 200, bytes: BODY.length })
    pool.close()
    expect(new Set(seen.slice(0, 3)).size).toBe(3)
    expect(seen.slice(3)).toEqual(seen.slice(0, 3))
  })

  it("counts an answer read in pieces: its head cut between two reads, its body longer than the read buffer", async () => {
    const body = "y".repeat(200_000)
    const { socketPath } = await serve((req) => {
      // Raw bytes under node:http's response: the head's second half comes once the first was sent.
      req.socket.write("HTTP/1.1 200 OK\r\nContent-Le", () =>
        setTimeout(() => req.socket.write(`ngth: ${body.length}\r\n\r\n${body}`), 20)
      )
    })
    const pool = await socketPool(socketPath, "/", 1)
    expect(await pool.get()).toEqual({ status: 200, bytes: body.length })
    pool.close()
  })

  it("replaces the connections the server closed while idle (its keep-alive timeout): later requests are answered", async () => {
    const { socketPath, server, connected } = await serve((_req, res) => answer(res))
    const pool = await socketPool(socketPath, "/", 2)
    await Promise.all([pool.get(), pool.get()])
    server.closeIdleConnections()
    // Both replaced: the pool has connected twice more.
    await connected(4)
    const answers = await Promise.all([pool.get(), pool.get(), pool.get()])
    pool.close()
    expect(answers).toEqual(Array(3).fill({ status: 200, bytes: BODY.length }))
  })

  it("sends a request again, on a new connection, when its connection closed before any byte of the answer", async () => {
    const { socketPath, sockets } = await serve((req, res, connection) => {
      // The first connection is closed under its request, as a keep-alive timeout firing as it arrives would.
      if (connection === 0) req.socket.destroy()
      else answer(res)
    })
    const pool = await socketPool(socketPath, "/", 1)
    expect(await pool.get()).toEqual({ status: 200, bytes: BODY.length })
    pool.close()
    expect(sockets).toHaveLength(2)
  })

  it("sends it again once only: a request whose every connection is closed under it fails, saying so", async () => {
    const { socketPath } = await serve((req) => req.socket.destroy())
    const pool = await socketPool(socketPath, "/", 1)
    await expect(pool.get()).rejects.toThrow("GET /: the daemon closed the connection")
    pool.close()
  })

  it("an answer to no request (a 408 before the server closes an unused connection) leaves the pool one connection", async () => {
    const { socketPath, sockets, connected } = await serve((_req, res) => answer(res))
    const pool = await socketPool(socketPath, "/", 1)
    await connected(1)
    sockets[0]?.end("HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    await connected(2)
    const answers = await Promise.all([pool.get(), pool.get()])
    pool.close()
    expect(answers).toEqual(Array(2).fill({ status: 200, bytes: BODY.length }))
  })

  it("fails every waiting and later request once the server is gone (a replacement cannot connect)", async () => {
    const { socketPath, server } = await serve((_req, res) => answer(res))
    const pool = await socketPool(socketPath, "/", 1)
    await new Promise((resolve) => {
      server.close(resolve)
      server.closeAllConnections()
    })
    await expect(pool.get()).rejects.toThrow(/ENOENT|ECONNREFUSED|closed the connection/)
    await expect(pool.get()).rejects.toThrow(/ENOENT|ECONNREFUSED/)
    pool.close()
  })
})
