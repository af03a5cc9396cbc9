import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type SandboxEvent, SandboxId } from "@prbox/domain"
import { Effect, Fiber, Schedule } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { newSandbox, withRepo } from "../../../packages/store/test/support.ts"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import {
  Cleanup,
  clientHome,
  DaemonStopped,
  ensureDaemon,
  followUntilSettled,
  Launch,
  NodePrboxClient,
  PrboxClient,
  stopDaemon
} from "../src/index.ts"

/** The real prboxd, started the way the CLI starts it (its entry module, this Node, the daemon's flags). */
const launcher = Launch.node(fileURLToPath(new URL("../../../apps/daemon/src/main.ts", import.meta.url)))

const homes: Array<string> = []
const pids: Array<number> = []

const makeHome = (prefix: string) => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), `prbox-client-${prefix}-`)))
  homes.push(home)
  return home
}

/** Ended long ago (status `error`): gc's to delete. Written before the daemon starts. */
const seedEnded = (stateDir: string, ids: ReadonlyArray<string>) =>
  Effect.runPromise(
    withRepo(stateDir, (repo) =>
      Effect.forEach(ids, (id, index) =>
        repo
          .insert(newSandbox(300 + index, { id: SandboxId.make(id), createdAt: 1, lastActivityAt: 1 }))
          .pipe(Effect.andThen(repo.updateStatus(SandboxId.make(id), { to: "error", error: "seeded", stoppedAt: 1 })))
      )
    )
  )

const withClient = <A, E>(home: string, body: Effect.Effect<A, E, PrboxClient>) =>
  Effect.runPromise(body.pipe(Effect.provide(NodePrboxClient.layer({ socketPath: clientHome(home).socketPath }))))

const start = (home: string) =>
  withClient(
    home,
    Effect.tap(
      ensureDaemon(clientHome(home), launcher, () => {}),
      ({ info }) => Effect.sync(() => pids.push(info.pid))
    )
  )

let home: string

beforeAll(async () => {
  home = makeHome("d")
  await seedEnded(home, ["ccccccccccc1", "ccccccccccc2"])
})

afterAll(async () => {
  for (const pid of pids) await Effect.runPromise(stopDaemon(pid))
  for (const dir of homes) rmSync(dir, { recursive: true, force: true })
})

describe("finding and starting the daemon", () => {
  it("starts prboxd when none answers, and finds it the next time", async () => {
    const first = await start(home)
    expect(first.started).toBe(true)
    expect(first.info.home).toBe(home)
    const second = await start(home)
    expect(second).toMatchObject({ started: false, info: { pid: first.info.pid } })
  })

  it("says why a daemon that cannot start exited, instead of waiting", async () => {
    const broken = makeHome("broken")
    // The daemon's run directory cannot be made: it is a file.
    writeFileSync(join(broken, "run"), "")
    const since = Date.now()
    const error = await withClient(broken, Effect.flip(ensureDaemon(clientHome(broken), launcher, () => {})))
    expect(error._tag).toBe("DaemonUnreachable")
    expect(error.message).toMatch(/^prboxd exited with code 1 while starting: prboxd: refusing to use .*\/run/)
    expect(Date.now() - since).toBeLessThan(15_000)
  })
})

describe("plan → confirm → act against the daemon's gc", () => {
  it("acts on nothing when declined, and on the plan shown when confirmed", async () => {
    const declined = await withClient(
      home,
      Effect.flatMap(PrboxClient, (client) =>
        Cleanup.planConfirmAct(Cleanup.gc(client), { confirm: () => Effect.succeed(false) })
      )
    )
    expect(declined._tag).toBe("Declined")
    expect([...declined.planned.plan.remove].sort()).toEqual(["ccccccccccc1", "ccccccccccc2"])
    const listed = await withClient(
      home,
      Effect.flatMap(PrboxClient, (client) => client.list({ all: true }))
    )
    expect(listed.map((view) => view.id).sort()).toEqual(["ccccccccccc1", "ccccccccccc2"])

    const done = await withClient(
      home,
      Effect.flatMap(PrboxClient, (client) =>
        Cleanup.planConfirmAct(Cleanup.gc(client), { confirm: () => Effect.succeed(true) })
      )
    )
    expect(done).toMatchObject({ _tag: "Done", failures: [] })
    if (done._tag === "Done") expect([...done.report.removed].sort()).toEqual(["ccccccccccc1", "ccccccccccc2"])
  })
})

describe("following a sandbox until it settles", () => {
  it("follows an open to running, the status changes as typed events", async () => {
    const where = makeHome("open")
    // The test image, and every container labelled with this test run.
    writeFileSync(
      join(where, "config.json"),
      // No pool: with one, the open would prebuild its base in the background.
      JSON.stringify({
        image: imageTag(healthzImage),
        labels: { [TEST_RUN_LABEL]: inject("testRunId") },
        warmPool: { size: 0, idleMinutes: 30 }
      })
    )
    const remote = makeRemote(where)
    await start(where)
    const seen: Array<SandboxEvent> = []
    const settled = await withClient(
      where,
      Effect.gen(function* () {
        const client = yield* PrboxClient
        const since = Date.now()
        const opened = yield* client.open({ input: remote.path, pr: 1 })
        const view = yield* followUntilSettled(client, opened, { since, onEvent: (event) => seen.push(event) })
        yield* client.delete(view.id, { force: true })
        return view
      })
    )
    expect(settled.status).toBe("running")
    const statuses = seen.flatMap((event) => (event._tag === "StatusChanged" ? [event.status] : []))
    expect(statuses.at(-1)).toBe("running")
    expect(statuses).toEqual(expect.arrayContaining(["cloning", "starting", "running"]))
    expect(seen.some((event) => event._tag === "Progress")).toBe(true)
  })

  it("reports a daemon killed mid-follow as DaemonStopped, with what to do", async () => {
    const where = makeHome("kill")
    await seedEnded(where, ["ddddddddddd1"])
    const { info } = await start(where)
    const failure = await withClient(
      where,
      Effect.gen(function* () {
        const client = yield* PrboxClient
        const view = yield* client.get(SandboxId.make("ddddddddddd1"))
        // Nothing settles after `since`: the follow waits on the live stream until the daemon goes.
        const follow = yield* Effect.forkChild(Effect.flip(followUntilSettled(client, view, { since: Date.now() })))
        // The latch: the daemon counts the follow's open stream.
        yield* client.health.pipe(
          Effect.filterOrFail((health) => health.streams > 0),
          Effect.retry({ schedule: Schedule.spaced("20 millis"), times: 500 })
        )
        process.kill(info.pid, "SIGKILL")
        // Gone: afterAll must not signal whatever process gets its pid next.
        pids.splice(pids.indexOf(info.pid), 1)
        return yield* Fiber.join(follow)
      })
    )
    expect(failure).toBeInstanceOf(DaemonStopped)
    expect(failure.message).toBe(
      "the daemon stopped while following sandbox ddddddddddd1; run `prbox daemon logs`, then `prbox status ddddddddddd1`"
    )
  })
})
