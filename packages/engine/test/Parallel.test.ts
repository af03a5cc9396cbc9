import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, rowOf } from "./harness.ts"
import { Probe, withProbe } from "./probe.ts"

/** Guarantee 3: different sandboxes progress in parallel. */
describe("sandboxes of different PRs", () => {
  it.live("a clone of PR 1 held on a latch does not block PR 2 from running", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const gate = probe.arm("clone", 1)
        const first = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* Deferred.await(gate.reached).pipe(bounded("PR 1 never reached its clone"))

        const second = yield* sandboxes
          .open({ input: remote.path, pr: 2 })
          .pipe(bounded("opening PR 2 waited for PR 1's clone"))
        assert.notStrictEqual(second.id, first.id)
        yield* sandboxes.awaitIdle(second.id).pipe(bounded("PR 2 waited for PR 1"))
        const running = yield* rowOf(second.id)
        assert.strictEqual(running.status, "running", running.error ?? "")
        assert.strictEqual(running.sourceCommit, remote.pr2)
        const held = yield* rowOf(first.id)
        assert.strictEqual(held.status, "cloning")
        assert.isNull(held.containerId)

        yield* gate.release
        yield* sandboxes.awaitIdle(first.id).pipe(bounded("PR 1 did not finish once released"))
        const released = yield* rowOf(first.id)
        assert.strictEqual(released.status, "running", released.error ?? "")
        assert.strictEqual(released.sourceCommit, remote.pr1)
        assert.notStrictEqual(released.containerId, running.containerId)
      })
    )
  })
})
