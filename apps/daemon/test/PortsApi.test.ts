import { type PreviewPort, SandboxConflict, SandboxNotFound } from "@prbox/domain"
import { Previews, PreviewUnavailable } from "@prbox/engine"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, makeHome, removeHome, runInProcess, socketOf } from "./support.ts"

/**
 * The ports endpoints over the real socket, on a daemon run in this process
 * with a scripted `Previews` (the engine's own is tested with real sandboxes
 * where it is wired): the handlers' job is the wire shape, the URLs and the
 * error mapping.
 */

const ID = "abcdefghijkl"
const PREVIEW_PORT = 47123
const declared: PreviewPort = {
  port: 3000,
  label: "web",
  source: "devcontainer",
  onAutoForward: "openBrowser",
  listening: true,
  public: false
}

const publicPorts = new Set<number>()
const setPublicCalls: Array<readonly [string, number, boolean]> = []

const scripted = Layer.succeed(
  Previews,
  Previews.of({
    previewPort: PREVIEW_PORT,
    connect: (id) => Effect.fail(new PreviewUnavailable({ id, reason: "not in this test" })),
    ports: (id) => {
      if (id === "missing00000") return Effect.fail(new SandboxNotFound({ id }))
      if (id === "stopped00000") return Effect.fail(new SandboxConflict({ id, reason: "is stopped" }))
      if (id === "oldbuild0000") return Effect.fail(new PreviewUnavailable({ id, reason: "rebuild it" }))
      return Effect.sync(() => [{ ...declared, public: publicPorts.has(declared.port) }])
    },
    token: (id) => (id === ID ? Effect.succeed("f".repeat(64)) : Effect.fail(new SandboxNotFound({ id }))),
    verifyToken: () => Effect.succeed(false),
    verifyPassword: () => Effect.succeed(false),
    setPublic: (id, port, open) =>
      Effect.sync(() => {
        setPublicCalls.push([id, port, open])
        if (open) publicPorts.add(port)
        else publicPorts.delete(port)
      }),
    isPublic: (_id, port) => Effect.succeed(publicPorts.has(port))
  })
)

let home: string
let socket: string
let daemon: { readonly stop: () => Promise<void> } | undefined

beforeAll(async () => {
  home = makeHome("ports-api")
  socket = socketOf(home)
  daemon = await runInProcess(home, scripted)
})

afterAll(async () => {
  await daemon?.stop()
  if (home !== undefined) removeHome(home)
})

describe("GET /v1/sandboxes/:id/ports", () => {
  it("lists the ports with both preview URLs and the preview port", async () => {
    const answer = await call(socket, { path: `/v1/sandboxes/${ID}/ports` })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json()).toEqual({
      previewPort: PREVIEW_PORT,
      ports: [
        {
          ...declared,
          url: `http://3000.${ID}.localhost:${PREVIEW_PORT}/`,
          pathUrl: `http://localhost:${PREVIEW_PORT}/s/${ID}/3000/`
        }
      ]
    })
  })

  it("maps the engine's errors: unknown 404, not running or made before previews 409", async () => {
    const cases: ReadonlyArray<readonly [string, number, string]> = [
      ["missing00000", 404, "NotFound"],
      ["stopped00000", 409, "Conflict"],
      ["oldbuild0000", 409, "Conflict"]
    ]
    for (const [id, status, tag] of cases) {
      const answer = await call(socket, { path: `/v1/sandboxes/${id}/ports` })
      expect(answer.status, id).toBe(status)
      expect((answer.json() as { _tag: string })._tag).toBe(tag)
    }
  })
})

describe("POST /v1/sandboxes/:id/ports/:port/public", () => {
  it("opens and closes a port, answering with the list after", async () => {
    const open = await call(socket, {
      method: "POST",
      path: `/v1/sandboxes/${ID}/ports/3000/public`,
      body: JSON.stringify({ public: true })
    })
    expect(open.status, open.text).toBe(200)
    expect((open.json() as { ports: Array<{ public: boolean }> }).ports[0]?.public).toBe(true)
    const close = await call(socket, {
      method: "POST",
      path: `/v1/sandboxes/${ID}/ports/3000/public`,
      body: JSON.stringify({ public: false })
    })
    expect((close.json() as { ports: Array<{ public: boolean }> }).ports[0]?.public).toBe(false)
    expect(setPublicCalls).toEqual([
      [ID, 3000, true],
      [ID, 3000, false]
    ])
  })

  it("refuses a port that is not 1..65535, or a body without `public`, before the engine is asked", async () => {
    const before = setPublicCalls.length
    for (const [port, body] of [
      ["0", { public: true }],
      ["65536", { public: true }],
      ["abc", { public: true }],
      ["3000", { open: true }]
    ] as const) {
      const answer = await call(socket, {
        method: "POST",
        path: `/v1/sandboxes/${ID}/ports/${port}/public`,
        body: JSON.stringify(body)
      })
      expect(answer.status, `${port} ${answer.text}`).toBe(400)
    }
    expect(setPublicCalls.length).toBe(before)
  })
})

describe("GET /v1/sandboxes/:id/preview-token", () => {
  it("answers the token; an unknown sandbox is a 404", async () => {
    const answer = await call(socket, { path: `/v1/sandboxes/${ID}/preview-token` })
    expect(answer.status).toBe(200)
    expect(answer.json()).toEqual({ token: "f".repeat(64) })
    expect((await call(socket, { path: "/v1/sandboxes/missing00000/preview-token" })).status).toBe(404)
  })
})
