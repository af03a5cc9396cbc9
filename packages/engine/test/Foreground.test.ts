import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Foreground } from "../src/index.ts"

/** Waits in `whenIdle`, announcing its pause through `paused`: the fiber and whether it had to wait. */
const waitIdle = (foreground: Foreground["Service"]) =>
  Effect.gen(function* () {
    const paused = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(
      foreground.whenIdle(Deferred.succeed(paused, undefined).pipe(Effect.asVoid)),
      {
        startImmediately: true
      }
    )
    return { fiber, paused }
  })

describe("the foreground (low priority's gate)", () => {
  it.effect("with no open holding it a background step goes on at once, without a pause", () =>
    Effect.gen(function* () {
      const foreground = yield* Foreground
      const { fiber, paused } = yield* waitIdle(foreground)
      yield* Fiber.join(fiber)
      assert.isFalse(yield* Deferred.isDone(paused), "no pause was announced")
    }).pipe(Effect.provide(Foreground.layer(0)))
  )

  it.effect(
    "a step waits while any open holds it and goes on once the last lets go; letting go twice counts once",
    () =>
      Effect.gen(function* () {
        const foreground = yield* Foreground
        const first = yield* foreground.hold
        const second = yield* foreground.hold
        const { fiber, paused } = yield* waitIdle(foreground)
        // The pause is announced before the wait: from here the step waits on the holds alone.
        yield* Deferred.await(paused)
        yield* first
        yield* first
        // A new step started now (at once, up to its wait) has to pause: one open still holds it.
        const probe = yield* waitIdle(foreground)
        assert.isTrue(yield* Deferred.isDone(probe.paused), "one open still holds it")
        yield* second
        yield* Fiber.join(fiber)
        yield* Fiber.join(probe.fiber)
        const after = yield* waitIdle(foreground)
        yield* Fiber.join(after.fiber)
        assert.isFalse(yield* Deferred.isDone(after.paused), "idle again")
      }).pipe(Effect.provide(Foreground.layer(0)))
  )

  it.effect("an open lets go only its settle time after `running`: the PR's page loads before background work", () =>
    Effect.gen(function* () {
      const foreground = yield* Foreground
      const release = yield* foreground.hold
      yield* release
      const { fiber, paused } = yield* waitIdle(foreground)
      assert.isTrue(yield* Deferred.isDone(paused), "still held right after running")
      yield* TestClock.adjust(9_999)
      assert.isUndefined(fiber.pollUnsafe(), "held until its settle time is up")
      yield* TestClock.adjust(1)
      yield* Fiber.join(fiber)
    }).pipe(Effect.provide(Foreground.layer(10_000)))
  )
})
