import { PullRequestNumber, SandboxId } from "@prbox/domain"
import { SandboxList, toView } from "@prbox/protocol"
import { SandboxRepo, type SandboxRepoShape, layer as sqliteRepo } from "@prbox/store"
import { Effect, Redacted, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { call, makeHome, removeHome, socketOf, startDaemon, until } from "./support.ts"

/** `f` on a connection of the test's own to the home's database (not the daemon's). */
const withStore = <A, E>(home: string, f: (repo: SandboxRepoShape) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(SandboxRepo, f).pipe(Effect.provide(sqliteRepo({ stateDir: home }))))

/** The body `GET /v1/sandboxes` must answer right now: the rows read afresh, encoded as HttpApi encodes them. */
const fresh = async (home: string, all: boolean): Promise<string> => {
  const rows = await withStore(home, (repo) => (all ? repo.findAll() : repo.findActive()))
  return JSON.stringify(Schema.encodeSync(SandboxList)(rows.map(toView)))
}

const list = async (socketPath: string, all: boolean) => {
  const answer = await call(socketPath, { path: all ? "/v1/sandboxes?all=true" : "/v1/sandboxes" })
  expect(answer.status, answer.text).toBe(200)
  expect(answer.headers["content-type"]).toBe("application/json")
  expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(answer.text)))
  // What the protocol client does with it.
  return { text: answer.text, rows: Schema.decodeUnknownSync(SandboxList)(JSON.parse(answer.text)) }
}

/** Both lists, each asked twice (the second answer comes from the cache), equal a fresh read, byte for byte. */
const expectCurrent = async (home: string, what: string) => {
  for (const all of [true, false]) {
    const expected = await fresh(home, all)
    for (let i = 0; i < 2; i++) expect((await list(socketOf(home), all)).text, `${what} (all=${all})`).toBe(expected)
  }
}

const statusIn = async (socketPath: string, id: string) =>
  (await list(socketPath, true)).rows.find((row) => row.id === id)?.status

describe("GET /v1/sandboxes served from the encoded list of the store's write generation", () => {
  it("is never stale: touch, insert, status changes, another connection's write and delete all show", async () => {
    const home = makeHome("list-cache")
    const remote = makeRemote(home)
    const socketPath = socketOf(home)
    // A row that ended long ago, there before the daemon starts.
    const ended = SandboxId.make("aaaaaaaaaaa1")
    await withStore(home, (repo) =>
      Effect.gen(function* () {
        yield* repo.insert({
          id: ended,
          provider: "git",
          host: "local",
          account: "",
          repository: "/elsewhere.git",
          pullRequest: PullRequestNumber.make(7),
          accessPassword: Redacted.make("seeded"),
          createdAt: 1_000,
          lastActivityAt: 1_000
        })
        yield* repo.updateStatus(ended, { to: "error", error: "seeded", stoppedAt: 1_000 })
      })
    )
    const daemon = await startDaemon(home)
    try {
      await expectCurrent(home, "at start")

      // An API touch: only lastActivityAt changes.
      expect((await call(socketPath, { method: "POST", path: `/v1/sandboxes/${ended}/touch` })).status).toBe(204)
      const touched = (await list(socketPath, true)).rows.find((row) => row.id === ended)
      expect(touched?.lastActivityAt).toBeGreaterThan(1_000)
      await expectCurrent(home, "after a touch")

      // An insert and the worker's status writes: the list follows the create to `running`.
      const opened = await call(socketPath, {
        method: "POST",
        path: "/v1/sandboxes",
        body: JSON.stringify({ input: remote.path, pr: 1 })
      })
      expect(opened.status, opened.text).toBe(200)
      const id = (opened.json() as { id: string }).id
      expect(await statusIn(socketPath, id)).toBeDefined()
      await until("the list to show the sandbox running", async () => (await statusIn(socketPath, id)) === "running", {
        timeoutMs: 60_000
      })
      await until(
        "the list to equal a fresh read",
        async () => (await list(socketPath, true)).text === (await fresh(home, true))
      )
      await expectCurrent(home, "once running")

      // A stop: live list without it, the full one with it stopped.
      const stopped = await call(socketPath, { method: "POST", path: `/v1/sandboxes/${id}/stop` })
      expect(stopped.status, stopped.text).toBe(200)
      expect(await statusIn(socketPath, id)).toBe("stopped")
      expect((await list(socketPath, false)).rows.map((row) => row.id)).not.toContain(id)
      await expectCurrent(home, "after a stop")

      // A write through another connection to the database (SQLite's data_version).
      await withStore(home, (repo) => repo.updateDetail(ended, "written by another connection"))
      expect((await list(socketPath, true)).rows.find((row) => row.id === ended)?.detail).toBe(
        "written by another connection"
      )
      await expectCurrent(home, "after another connection's write")

      // A delete.
      expect((await call(socketPath, { method: "DELETE", path: `/v1/sandboxes/${id}` })).status).toBe(204)
      expect((await list(socketPath, true)).rows.map((row) => row.id)).toEqual([ended])
      await expectCurrent(home, "after a delete")
    } finally {
      await daemon.stop()
      removeHome(home)
    }
  })
})
