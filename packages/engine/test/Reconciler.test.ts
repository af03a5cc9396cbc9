import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ContainerRuntimeShape, LABELS, Reconciler, SandboxService } from "../src/index.ts"
import { withEngine } from "./harness.ts"
import { labelledContainer, newId, seedRow } from "./reconcile-fixtures.ts"

/** The real runtime, with the labels of every listing it is asked for kept in `calls`. */
const countingListings = (calls: Array<Readonly<Record<string, string>>>) => (real: ContainerRuntimeShape) => ({
  ...real,
  listByLabel: (labels: Readonly<Record<string, string>>) =>
    Effect.andThen(
      Effect.sync(() => calls.push(labels)),
      real.listByLabel(labels)
    )
})

describe("reconciler: one snapshot a run", () => {
  it.live("a full run lists the labelled containers once for all three passes", () => {
    const calls: Array<Readonly<Record<string, string>>> = []
    return withEngine({ runtime: countingListings(calls) }, ({ home }) =>
      Effect.gen(function* () {
        // Work for the drift pass: an orphaned create and a container no row claims.
        const orphan = yield* seedRow("cloning")
        yield* labelledContainer(home, newId(), { running: true })
        calls.length = 0
        const report = yield* (yield* Reconciler).reconcile
        assert.deepStrictEqual(
          report.passes.map((pass) => pass.pass),
          ["drift", "legacy", "account"]
        )
        assert.include(
          report.passes.flatMap((pass) => pass.changes.map((c) => c.sandboxId)),
          orphan.id
        )
        assert.deepStrictEqual(calls, [{ [LABELS.home]: home }])
      })
    )
  })

  it.live("the reconcile before a create lists that PR's containers once", () => {
    const calls: Array<Readonly<Record<string, string>>> = []
    return withEngine({ runtime: countingListings(calls) }, ({ home, remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* sandboxes.awaitIdle(opened.id)
        assert.deepStrictEqual(calls, [{ [LABELS.home]: home, [LABELS.pr]: "1" }])
      })
    )
  })
})
