import { Context, Deferred, Effect, FiberSet, Layer, Ref } from "effect"

interface State {
  /** Opens and claims between admission and `running`. */
  readonly holds: number
  /** Background steps waiting for none to hold. */
  readonly waiters: ReadonlyArray<Deferred.Deferred<void>>
}

/**
 * How long the foreground stays held past an open's `running`: the PR's
 * code-server page (the user's login, the workbench's first load) gets the
 * CPU before a pool container or a prebuild starts competing for it.
 */
export const SETTLE_AFTER_OPEN_MS = 10_000

/**
 * Low priority made real: an open or a claim holds the foreground from its
 * admission until `settleMs` after its row says `running` (or its worker ends); the
 * background makers (a prebuild's build, a pool container's make) wait
 * before each of their steps while any holds it. A step under way runs on
 * (at its low CPU share): the pause is at step boundaries, so a step's
 * deadline never counts a frozen container's time, and every engine (a
 * remote one has no `docker pause` for a tunnelled exec) pauses alike.
 */
const make = (settleMs: number) =>
  Effect.gen(function* () {
    const state = yield* Ref.make<State>({ holds: 0, waiters: [] })
    /** Releases waiting out their settle time; ended with the engine. */
    const settling = yield* FiberSet.make<void, never>()

    const leave = Effect.flatMap(
      Ref.modify(state, ({ holds, waiters }): [ReadonlyArray<Deferred.Deferred<void>>, State] =>
        holds <= 1 ? [waiters, { holds: 0, waiters: [] }] : [[], { holds: holds - 1, waiters }]
      ),
      (woken) => Effect.forEach(woken, (waiter) => Deferred.succeed(waiter, undefined), { discard: true })
    )

    /** Holds the foreground; the effect returned lets it go (once: later runs do nothing). */
    const hold: Effect.Effect<Effect.Effect<void>> = Effect.gen(function* () {
      yield* Ref.update(state, (s) => ({ ...s, holds: s.holds + 1 }))
      const released = yield* Ref.make(false)
      const settled = settleMs === 0 ? leave : FiberSet.run(settling, Effect.andThen(Effect.sleep(settleMs), leave))
      return Effect.flatMap(Ref.getAndSet(released, true), (was) => (was ? Effect.void : Effect.asVoid(settled)))
    })

    /**
     * Returns at once when no open or claim holds the foreground, else once
     * none does; `onPause` runs first when it has to wait (the maker says so).
     */
    const whenIdle = (onPause: Effect.Effect<void>): Effect.Effect<void> =>
      Effect.gen(function* () {
        const waiter = yield* Deferred.make<void>()
        const waits = yield* Ref.modify(state, (s): [boolean, State] =>
          s.holds === 0 ? [false, s] : [true, { ...s, waiters: [...s.waiters, waiter] }]
        )
        if (!waits) return
        yield* onPause
        yield* Deferred.await(waiter)
      })

    return { hold, whenIdle }
  })

export class Foreground extends Context.Service<Foreground, Effect.Success<ReturnType<typeof make>>>()(
  "prbox/engine/Foreground"
) {
  /** `settleMs`: the hold past `running` (tests that wait on a fill pass 0). */
  static readonly layer = (settleMs: number = SETTLE_AFTER_OPEN_MS) => Layer.effect(Foreground, make(settleMs))
}
