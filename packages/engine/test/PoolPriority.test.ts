import { assert, describe, it } from "@effect/vitest"
import { POOL_LABEL, PREBUILD_LABELS } from "@prbox/domain"
import { Deferred, Effect, Fiber } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { MakePrebuild, WarmPool } from "../src/index.ts"
import { bounded, openRunning, openSettled, withEngine } from "./harness.ts"
import { poolConfig, poolDevcontainer } from "./pool-support.ts"
import { removePrebuildsOf } from "./prebuild-support.ts"

/** One latch: a step that announces it got there and waits to be let go. */
const latch = () => ({ reached: Deferred.makeUnsafe<void>(), release: Deferred.makeUnsafe<void>() })
type Latch = ReturnType<typeof latch>
const hold = (at: Latch) => Effect.andThen(Deferred.succeed(at.reached, undefined), Deferred.await(at.release))
const let_ = (at: Latch) => Deferred.succeed(at.release, undefined)

/**
 * Low priority made real (issue 30): a prebuild's build and a pool
 * container's make pause while an open runs. Each is held by a latch at a
 * step (its container's provision) while an open starts; the open is held
 * just before its `running` write; the maker is let go: its next step must
 * announce a pause (the foreground's `onPause`) and not reach its
 * container's start, which comes only after the open's `running`.
 */
describe("low priority: background makers pause while an open runs", () => {
  it.live(
    "a prebuild build and a pool fill make no progress from an open's admission to its running",
    () => {
      const events: Array<string> = []
      const stage = {
        prebuild: latch(),
        pool: latch(),
        open: latch(),
        paused: Deferred.makeUnsafe<void>(),
        started: Deferred.makeUnsafe<void>(),
        maker: "none" as "none" | "prebuild" | "pool",
        holdRunning: false,
        made: undefined as string | undefined
      }
      const makerOf = (labels: Readonly<Record<string, string>>) =>
        labels[PREBUILD_LABELS.prebuild] !== undefined ? "prebuild" : labels[POOL_LABEL] !== undefined ? "pool" : "none"
      return withEngine(
        {
          config: poolConfig(1),
          runtime: (real) => ({
            ...real,
            provision: (spec, onProgress) => {
              const maker = makerOf(spec.labels)
              if (maker === "none" || maker !== stage.maker) return real.provision(spec, onProgress)
              return Effect.andThen(
                hold(stage[maker]),
                Effect.tap(real.provision(spec, onProgress), (id) =>
                  Effect.sync(() => {
                    stage.made = id
                  })
                )
              )
            },
            start: (containerId) =>
              containerId === stage.made
                ? Effect.andThen(
                    Effect.andThen(
                      Effect.sync(() => events.push(`${stage.maker} start`)),
                      Deferred.succeed(stage.started, undefined)
                    ),
                    real.start(containerId)
                  )
                : real.start(containerId)
          }),
          lifecycle: (real) => ({
            ...real,
            advance: (id, to, fields) =>
              to === "running" && stage.holdRunning
                ? Effect.andThen(
                    hold(stage.open),
                    Effect.tap(real.advance(id, to, fields), () => Effect.sync(() => events.push("open running")))
                  )
                : real.advance(id, to, fields)
          }),
          foreground: (real) => ({
            ...real,
            // Read at the pause: a maker builds its wait once, before the test's stages.
            whenIdle: (onPause) =>
              real.whenIdle(
                Effect.andThen(
                  onPause,
                  Effect.suspend(() => Deferred.succeed(stage.paused, undefined))
                )
              )
          })
        },
        ({ home, remote }) =>
          Effect.gen(function* () {
            /** Holds the maker at its provision, opens `pr` up to its running write, lets the maker go: it must pause. */
            const whileOpening = (maker: "prebuild" | "pool", pr: number) =>
              Effect.gen(function* () {
                yield* Deferred.await(stage[maker].reached).pipe(bounded(`the ${maker} at its provision`, 240))
                stage.holdRunning = true
                pushPullRequest(remote.path, pr, { "pr.txt": String(pr) })
                const opening = yield* Effect.forkChild(openSettled(remote.path, pr))
                yield* Deferred.await(stage.open.reached).pipe(bounded(`PR ${pr} before its running`, 240))
                yield* let_(stage[maker])
                const first = yield* Effect.raceFirst(
                  Effect.as(Deferred.await(stage.paused), "paused"),
                  Effect.as(Deferred.await(stage.started), "started")
                ).pipe(bounded(`the ${maker}'s next step`, 120))
                assert.strictEqual(first, "paused", `the ${maker} went on to start its container while an open ran`)
                stage.holdRunning = false
                yield* let_(stage.open)
                const opened = yield* Fiber.join(opening)
                assert.strictEqual(opened.status, "running", opened.error ?? "")
                yield* Deferred.await(stage.started).pipe(bounded(`the ${maker} once the open ran`, 120))
                assert.deepStrictEqual(events, ["open running", `${maker} start`])
              })

            const base = pushPullRequest(remote.path, 90, { ".devcontainer/devcontainer.json": poolDevcontainer })
            gitSync(remote.path, "update-ref", "refs/heads/main", base)
            // The open of PR 3 starts the base's prebuild in the background: held at its container's provision.
            stage.maker = "prebuild"
            pushPullRequest(remote.path, 3, { "three.txt": "3" })
            yield* openRunning(remote.path, 3)
            yield* whileOpening("prebuild", 5)
            yield* (yield* MakePrebuild).settled

            // The open of PR 4 starts from the prebuild and fills the pool: held at the pool container's provision.
            Object.assign(stage, {
              open: latch(),
              paused: Deferred.makeUnsafe<void>(),
              started: Deferred.makeUnsafe<void>(),
              maker: "pool",
              made: undefined
            })
            events.length = 0
            pushPullRequest(remote.path, 4, { "four.txt": "4" })
            yield* openRunning(remote.path, 4)
            yield* whileOpening("pool", 6)
            yield* (yield* WarmPool).settled
            const entries = yield* (yield* WarmPool).list
            assert.deepStrictEqual(
              entries.map((e) => e.state),
              ["ready"],
              "the paused fill went on to the end"
            )
          }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      )
    },
    600_000
  )
})
