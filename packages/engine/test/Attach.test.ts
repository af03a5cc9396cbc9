import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ContainerRuntimeShape, Reconciler, SandboxService } from "../src/index.ts"
import { openRunning, withEngine } from "./harness.ts"

/** The real runtime, with the container of every `attach` kept in `calls`. */
const countingAttaches = (calls: Array<string>) => (real: ContainerRuntimeShape) => ({
  ...real,
  attach: (containerId: string) =>
    Effect.andThen(
      Effect.sync(() => calls.push(containerId)),
      real.attach(containerId)
    )
})

describe("reconcile and a runtime made afresh", () => {
  it.live("attaches the container of each running sandbox (a remote engine's forward), not a stopped one's", () => {
    const calls: Array<string> = []
    return withEngine({ runtime: countingAttaches(calls) }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const reconciler = yield* Reconciler
        const running = yield* openRunning(remote.path, 1)
        calls.length = 0
        yield* reconciler.reconcile
        assert.deepStrictEqual(calls, [running.containerId])

        yield* sandboxes.stop(running.id)
        calls.length = 0
        yield* reconciler.reconcile
        assert.deepStrictEqual(calls, [])
      })
    )
  })
})
