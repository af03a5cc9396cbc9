import { existsSync } from "node:fs"
import { join } from "node:path"
import { SandboxEvent, SandboxId, type SandboxStatus } from "@prbox/domain"
import { SandboxRepo, layer as sqliteRepo } from "@prbox/store"
import { Effect, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { call, containersOfHome, makeHome, readEvents, removeHome, socketOf, startDaemon } from "./support.ts"

const decodeEvent = Schema.decodeUnknownSync(SandboxEvent)

/** The stream's events, decoded as the protocol's variants. */
const typed = (events: ReadonlyArray<Record<string, unknown>>): ReadonlyArray<SandboxEvent> =>
  events.map((event) => decodeEvent(event))

const changedTo = (status: SandboxStatus) => (event: SandboxEvent) =>
  event._tag === "StatusChanged" && event.status === status

/** A status change as `→ <status>`, a progress line as itself: for checking the order of what happened. */
const step = (event: SandboxEvent) => (event._tag === "StatusChanged" ? `→ ${event.status}` : event.line)

const rowOf = (home: string, id: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      return Option.getOrThrow(yield* repo.findById(SandboxId.make(id)))
    }).pipe(Effect.provide(sqliteRepo({ stateDir: home })))
  )

const open = async (socketPath: string, input: string, pr: number) => {
  const answer = await call(socketPath, { method: "POST", path: "/v1/sandboxes", body: JSON.stringify({ input, pr }) })
  expect(answer.status, answer.text).toBe(200)
  return (answer.json() as { id: string }).id
}

const seqs = (events: ReadonlyArray<Record<string, unknown>>) => events.map((event) => event.seq as number)

describe("the event stream", () => {
  it("replays the log then follows live events, resumable by seq, without gaps or duplicates", async () => {
    const home = makeHome("events", { setupCommands: ["echo one", "echo two"] })
    const remote = makeRemote(home)
    const daemon = await startDaemon(home)
    const socketPath = socketOf(home)
    try {
      const id = await open(socketPath, remote.path, 1)
      const untilRunning = typed(
        await readEvents(socketPath, `/v1/sandboxes/${id}/events?after=0`, (events) =>
          typed(events).some(changedTo("running"))
        )
      )
      // Every event of the sandbox, in log order, each once.
      const log = (await call(socketPath, { path: `/v1/sandboxes/${id}/logs?limit=1000` })).json() as {
        lines: ReadonlyArray<{ seq: number }>
      }
      expect(seqs(untilRunning)).toEqual(log.lines.map((line) => line.seq))
      expect(untilRunning.every((event) => event.sandboxId === id)).toBe(true)
      const lines = untilRunning.map(step)
      const order = ["→ cloning", "→ starting", "[1/2] echo one", "[1/2] one", "[2/2] echo two", "→ running"]
      const positions = order.map((line) => lines.indexOf(line))
      expect(
        positions.every((position) => position >= 0),
        lines.join("\n")
      ).toBe(true)
      expect([...positions].sort((a, b) => a - b)).toEqual(positions)
      // Replayed lines carry the status they were written under.
      expect(untilRunning.find((event) => event._tag === "Progress" && event.line === "[1/2] one")?.status).toBe(
        "starting"
      )

      // Resume from the middle, then see live events (a stop) follow without a gap.
      const middle = untilRunning[Math.floor(untilRunning.length / 2)]?.seq ?? 0
      const resumed = readEvents(socketPath, `/v1/sandboxes/${id}/events?after=${middle}`, (events) =>
        typed(events).some(changedTo("stopped"))
      )
      const stopped = await call(socketPath, { method: "POST", path: `/v1/sandboxes/${id}/stop` })
      expect(stopped.status).toBe(200)
      const tail = typed(await resumed)
      const after = (
        await call(socketPath, { path: `/v1/sandboxes/${id}/logs?after=${middle}&limit=1000` })
      ).json() as {
        lines: ReadonlyArray<{ seq: number }>
      }
      expect(seqs(tail)).toEqual(after.lines.map((line) => line.seq))
      expect(tail[0]?.seq).toBeGreaterThan(middle)
      expect(tail.some(changedTo("stopping"))).toBe(true)
      expect(tail.at(-1)).toMatchObject({ _tag: "StatusChanged", status: "stopped", error: null })
      // An unknown sandbox is a 404, not an empty stream.
      expect((await call(socketPath, { path: "/v1/sandboxes/zzzzzzzzzzzz/events" })).status).toBe(404)
    } finally {
      await daemon.stop()
      removeHome(home)
    }
  })
})

describe("SIGTERM during a create", () => {
  it("exits promptly; the next start's reconcile ends the row's claim of progress", async () => {
    const home = makeHome("sigterm", { setupCommands: ["sleep 300"] })
    const remote = makeRemote(home)
    const socketPath = socketOf(home)
    let daemon = await startDaemon(home)
    try {
      const id = await open(socketPath, remote.path, 1)
      // The create is inside its setup step (its container runs `sleep 300`).
      await readEvents(socketPath, `/v1/sandboxes/${id}/events?after=0`, (events) =>
        events.some((event) => String(event.line).startsWith("[1/1] sleep 300"))
      )
      const signalled = Date.now()
      const { code } = await daemon.stop()
      expect(code).toBe(0)
      expect(Date.now() - signalled).toBeLessThan(15_000)
      expect(existsSync(socketPath)).toBe(false)
      expect(existsSync(join(home, "run", "prboxd.lock"))).toBe(false)

      // What is true with no daemon: the interrupted worker wrote nothing more,
      // so the row still says `starting` and its container still runs.
      const interrupted = await rowOf(home, id)
      expect(interrupted.status).toBe("starting")
      expect(interrupted.containerId).not.toBeNull()
      expect(containersOfHome(home, true)).toHaveLength(1)

      // The next start reconciles before it listens: no worker owns the
      // create, so the row is an error and its container is stopped.
      daemon = await startDaemon(home)
      const after = (await call(socketPath, { path: `/v1/sandboxes/${id}` })).json() as {
        status: string
        error: string | null
      }
      expect(after.status).toBe("error")
      expect(after.error).toBe("interrupted before it was ready")
      expect(containersOfHome(home, true)).toHaveLength(0)

      const removed = await call(socketPath, { method: "DELETE", path: `/v1/sandboxes/${id}` })
      expect(removed.status).toBe(204)
      expect(containersOfHome(home)).toHaveLength(0)
    } finally {
      await daemon.stop()
      removeHome(home)
    }
  })
})
