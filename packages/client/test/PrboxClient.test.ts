import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SandboxId } from "@prbox/domain"
import { Busy, NotFound, type SandboxEvent } from "@prbox/protocol"
import { Effect, Stream } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { NodePrboxClient, PrboxClient } from "../src/index.ts"

const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const socketIn = () => {
  const dir = mkdtempSync(join(tmpdir(), "prbox-proto-"))
  dirs.push(dir)
  return join(dir, "d.sock")
}

/** A stand-in daemon on a real Unix socket answering canned HTTP. */
const withServer = async <A>(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  body: (socketPath: string) => Promise<A>
): Promise<A> => {
  const socketPath = socketIn()
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(socketPath, resolve))
  try {
    return await body(socketPath)
  } finally {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const json = (res: ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

const run = <A, E>(socketPath: string, effect: Effect.Effect<A, E, PrboxClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(NodePrboxClient.layer({ socketPath, requestTimeout: "5 seconds" }))))

const client = Effect.gen(function* () {
  return yield* PrboxClient
})

const version = (api: ReadonlyArray<number>) => ({
  name: "prboxd",
  version: "9.9.9",
  api,
  pid: 4242,
  home: "/home/x/.prbox",
  startedAt: 1
})

describe("typed client over the Unix socket", () => {
  it("accepts a daemon serving v1", async () => {
    const info = await withServer(
      (req, res) => (req.url === "/version" ? json(res, 200, version([1])) : json(res, 404, {})),
      (socketPath) =>
        run(
          socketPath,
          Effect.flatMap(client, (c) => c.checkVersion)
        )
    )
    expect(info.pid).toBe(4242)
  })

  it("says a newer daemon is incompatible", async () => {
    const error = await withServer(
      (_req, res) => json(res, 200, version([2])),
      (socketPath) => run(socketPath, Effect.flip(Effect.flatMap(client, (c) => c.checkVersion)))
    )
    expect(error._tag).toBe("IncompatibleDaemon")
    expect(error.message).toContain("serves API v2")
    expect(error.message).toContain("needs v1")
  })

  it("says an old daemon without /version is too old", async () => {
    const error = await withServer(
      (_req, res) => {
        res.writeHead(404)
        res.end()
      },
      (socketPath) => run(socketPath, Effect.flip(Effect.flatMap(client, (c) => c.checkVersion)))
    )
    expect(error._tag).toBe("IncompatibleDaemon")
    expect(error.message).toContain("older than this client")
  })

  it("reports an absent daemon as DaemonUnreachable", async () => {
    const socketPath = socketIn()
    const error = await run(socketPath, Effect.flip(Effect.flatMap(client, (c) => c.health)))
    expect(error._tag).toBe("DaemonUnreachable")
    expect(error.message).toContain(socketPath)
  })

  it("decodes typed errors by tag", async () => {
    const [notFound, busy] = await withServer(
      (req, res) =>
        req.url?.startsWith("/v1/sandboxes/")
          ? json(res, 404, { _tag: "NotFound", message: "no sandbox with id abcdefghijkl" })
          : json(res, 503, { _tag: "Busy", message: "prboxd is busy" }),
      (socketPath) =>
        run(
          socketPath,
          Effect.gen(function* () {
            const c = yield* client
            const id = SandboxId.make("abcdefghijkl")
            return [yield* Effect.flip(c.get(id)), yield* Effect.flip(c.list())] as const
          })
        )
    )
    expect(notFound).toBeInstanceOf(NotFound)
    expect(notFound.message).toBe("no sandbox with id abcdefghijkl")
    expect(busy).toBeInstanceOf(Busy)
  })

  it("decodes an NDJSON event stream", async () => {
    const sandboxId = SandboxId.make("abcdefghijkl")
    const events: Array<SandboxEvent> = [
      { _tag: "Progress", seq: 1, sandboxId, at: 10, status: "creating", line: "opening" },
      { _tag: "StatusChanged", seq: 2, sandboxId, at: 11, status: "cloning", error: null },
      { _tag: "StatusChanged", seq: 3, sandboxId, at: 12, status: "error", error: "clone failed" }
    ]
    const received = await withServer(
      (req, res) => {
        expect(req.url).toBe("/v1/sandboxes/abcdefghijkl/events?after=0")
        res.writeHead(200, { "content-type": "application/x-ndjson" })
        for (const event of events) res.write(`${JSON.stringify(event)}\n`)
        res.end()
      },
      (socketPath) =>
        run(
          socketPath,
          Effect.flatMap(client, (c) => Stream.runCollect(c.events(SandboxId.make("abcdefghijkl"), { after: 0 })))
        )
    )
    expect(Array.from(received)).toEqual(events)
    // A status change arrives as its variant, not as text to parse.
    const changes = Array.from(received).filter((event) => event._tag === "StatusChanged")
    expect(changes.map((event) => [event.status, event.error])).toEqual([
      ["cloning", null],
      ["error", "clone failed"]
    ])
  })
})
