import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, containersOf, openRunning, rowOf } from "./harness.ts"
import { healthz, Probe, withProbe } from "./probe.ts"

describe("restart", () => {
  it.live("a stopped sandbox restarts in the same container", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)

        const stopped = yield* sandboxes.stop(running.id)
        assert.strictEqual(stopped.status, "stopped")
        assert.deepStrictEqual(containersOf(running.id, { all: false }), [])

        const restarting = yield* sandboxes.restart(running.id)
        assert.strictEqual(restarting.status, "starting")
        yield* sandboxes.awaitIdle(running.id).pipe(bounded("the restart did not finish"))
        const again = yield* rowOf(running.id)
        assert.strictEqual(again.status, "running", again.error ?? "")
        assert.strictEqual(again.containerId, running.containerId)
        assert.deepStrictEqual(containersOf(running.id, { all: true }), [running.containerId])
        assert.deepStrictEqual(containersOf(running.id, { all: false }), [running.containerId])
        assert.strictEqual(probe.count("provision"), 1)
        assert.strictEqual((yield* healthz(again.hostPort ?? 0)).status, 200)
      })
    )
  })

  it.live("a stop Docker does not confirm fences the row: restart and re-open are refused", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)

        probe.fault("stop", true)
        const failure = yield* Effect.flip(sandboxes.stop(running.id))
        assert.strictEqual(failure._tag, "DestroyNotConfirmed")
        const fenced = yield* rowOf(running.id)
        assert.strictEqual(fenced.status, "error")
        assert.isTrue(fenced.destroyFenced)

        const restart = yield* Effect.flip(sandboxes.restart(running.id))
        assert.strictEqual(restart._tag, "SandboxConflict")
        const reopen = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 1 }))
        assert.strictEqual(reopen._tag, "SandboxConflict")
        // The container may still run, but exec in it is refused while the row is fenced.
        const exec = yield* Effect.flip(
          sandboxes.exec(running.id, ["true"], { timeoutMs: 5_000, maxOutputBytes: 1024 })
        )
        assert.strictEqual(exec._tag, "SandboxConflict")
        assert.include(exec.message, "not confirmed")
        assert.strictEqual(probe.count("provision"), 1)
        assert.strictEqual((yield* rowOf(running.id)).destroyFenced, true)

        // A confirmed stop lifts the fence; the sandbox can run again.
        probe.fault("stop", false)
        const stopped = yield* sandboxes.stop(running.id)
        assert.strictEqual(stopped.status, "stopped")
        assert.isFalse(stopped.destroyFenced)
        assert.deepStrictEqual(containersOf(running.id, { all: false }), [])
        yield* sandboxes.restart(running.id)
        yield* sandboxes.awaitIdle(running.id).pipe(bounded("the restart did not finish"))
        const again = yield* rowOf(running.id)
        assert.strictEqual(again.status, "running", again.error ?? "")
        assert.strictEqual(again.containerId, running.containerId)
      })
    )
  })
})
