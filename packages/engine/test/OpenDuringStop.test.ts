import { assert, describe, it } from "@effect/vitest"
import { SandboxConflict } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Deferred, Effect, Fiber, Latch } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, containersOf, openRunning, rowOf, statusTrail, withEngine } from "./harness.ts"

/**
 * Opening a PR whose sandbox is being stopped is refused, and nothing moves:
 * the stop is held inside its Docker call by a latch while the open runs.
 */
describe("open during a stop", () => {
  it.live("is refused as a conflict before anything is touched; the stop then ends stopped", () => {
    const held = { armed: false, reached: Deferred.makeUnsafe<void>(), latch: Latch.makeUnsafe(false) }
    return withEngine(
      {
        runtime: (real) => ({
          ...real,
          stop: (containerId) =>
            Effect.suspend(() =>
              held.armed
                ? Deferred.succeed(held.reached, undefined).pipe(Effect.andThen(held.latch.await))
                : Effect.void
            ).pipe(Effect.andThen(real.stop(containerId)))
        })
      },
      ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const running = yield* openRunning(remote.path, 1)
          held.armed = true
          const stopping = yield* Effect.forkChild(sandboxes.stop(running.id))
          yield* Deferred.await(held.reached).pipe(bounded("the stop did not reach Docker"))
          const before = yield* rowOf(running.id)
          assert.strictEqual(before.status, "stopping")

          const refusal = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 1 })).pipe(
            bounded("the open did not answer while the stop was held", 10),
            Effect.ensuring(held.latch.open)
          )
          assert.instanceOf(refusal, SandboxConflict)
          assert.strictEqual(refusal.message, `sandbox ${running.id}: it is still stopping; retry after it has stopped`)
          const after = yield* rowOf(running.id)
          assert.deepStrictEqual(
            [after.status, after.containerId, after.hostPort, after.lastActivityAt, after.error],
            [before.status, before.containerId, before.hostPort, before.lastActivityAt, before.error]
          )
          assert.lengthOf(yield* (yield* SandboxRepo).findAll(), 1, "the open created a row")

          const stopped = yield* Fiber.join(stopping).pipe(bounded("the stop did not end"))
          assert.strictEqual(stopped.status, "stopped")
          assert.deepStrictEqual(containersOf(running.id, { all: false }), [])
          const trail = yield* statusTrail(running.id)
          assert.deepStrictEqual(trail.slice(trail.indexOf("stopping")), ["stopping", "stopped"], trail.join(" → "))
        })
    )
  })
})
