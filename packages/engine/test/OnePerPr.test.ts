import { assert, describe, it } from "@effect/vitest"
import { SandboxRepo } from "@prbox/store"
import { Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, containersOf, docker, openRunning, rowOf, statusTrail } from "./harness.ts"
import { healthz, Probe, withProbe } from "./probe.ts"

/** Guarantee 1: one live sandbox per PR, and a cheap answer for a running one. */
describe("one live sandbox per PR", () => {
  it.live("20 concurrent opens of one PR share one row and one container", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const repo = yield* SandboxRepo
        const opened = yield* Effect.all(
          Array.from({ length: 20 }, () => sandboxes.open({ input: remote.path, pr: 1 })),
          { concurrency: "unbounded" }
        )
        const ids = new Set(opened.map((row) => row.id))
        assert.strictEqual(ids.size, 1, `opens returned ${[...ids].join(", ")}`)
        const id = opened[0]?.id ?? assert.fail("no open returned")
        yield* sandboxes.awaitIdle(id).pipe(bounded("the create did not finish"))
        const rows = (yield* repo.findAll()).filter((row) => row.pullRequest === 1)
        assert.deepStrictEqual(
          rows.map((row) => row.id),
          [id]
        )
        const row = yield* rowOf(id)
        assert.strictEqual(row.status, "running", row.error ?? "")
        assert.deepStrictEqual(containersOf(id, { all: true }), [row.containerId])
        assert.strictEqual(probe.count("provision"), 1)
        assert.strictEqual(probe.count("clone"), 1)
      })
    )
  })

  it.live("re-opening a running sandbox answers at once, after one inspect", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const before = probe.journal.length
        const again = yield* sandboxes.open({ input: remote.path, pr: 1 })
        assert.strictEqual(again.id, running.id)
        assert.strictEqual(again.status, "running")
        assert.strictEqual(again.containerId, running.containerId)
        // Exactly one inspect; no fetch, no image, no provision, no start.
        assert.deepStrictEqual(probe.journal.slice(before), ["state"])
      })
    )
  })

  it.live("re-opening after its container was killed corrects the row and runs it again", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const containerId = running.containerId ?? assert.fail("no container recorded")
        docker("kill", containerId)
        assert.deepStrictEqual(containersOf(running.id, { all: false }), [])

        const again = yield* sandboxes.open({ input: remote.path, pr: 1 })
        assert.strictEqual(again.id, running.id)
        assert.notStrictEqual(again.status, "running", "the dead container was reported as running")
        yield* sandboxes.awaitIdle(running.id).pipe(bounded("the restart did not finish"))
        const revived = yield* rowOf(running.id)
        assert.strictEqual(revived.status, "running", revived.error ?? "")
        assert.strictEqual(revived.containerId, containerId)
        assert.deepStrictEqual(containersOf(running.id, { all: false }), [containerId])
        const trail = yield* statusTrail(running.id)
        assert.deepStrictEqual(trail.slice(trail.indexOf("running")), ["running", "stopped", "starting", "running"])
        const health = yield* healthz(revived.hostPort ?? 0)
        assert.strictEqual(health.status, 200)
      })
    )
  })
})
