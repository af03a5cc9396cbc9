import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { ContainerRuntime, Gc, LeftoverHelpers, Reconciler } from "../src/index.ts"
import { containerExists } from "./crash/agree.ts"
import { type Helper, helpersOf, killMidFolderRead, removeHelpersOf } from "./crash/helper-kill.ts"
import { engineLayer } from "./engine-layer.ts"

/**
 * A helper container (a folder read's, never started) left by an engine
 * killed with SIGKILL while it was in use is removed by the next start's
 * pass (LeftoverHelpers); another home's and one this process uses are kept,
 * and neither reconcile nor prune touches a helper (it may be in use).
 */

/** A private home; every helper of it still there is removed with it. */
const helperHome = Effect.acquireRelease(
  Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), "prbox-helpers-")))),
  (home) =>
    Effect.sync(() => {
      removeHelpersOf(home)
      rmSync(home, { recursive: true, force: true })
    })
)

/** An engine on `home` in a child process, killed with SIGKILL while its folder read's helper exists: that helper. */
const killedMidRead = (home: string) =>
  Effect.gen(function* () {
    const killed = yield* killMidFolderRead(home, inject("testRunId"))
    assert.isDefined(killed.reached, `the child ended before its read: ${killed.stderr}`)
    assert.strictEqual(killed.signal, "SIGKILL", killed.stderr)
    const left = helpersOf(home)
    assert.lengthOf(left, 1, "the kill left the read's helper")
    const [helper] = left as [Helper]
    assert.strictEqual(helper.state, "created", "the helper was never started")
    assert.match(helper.name, /^prbox-folder-[0-9a-f]+$/)
    return helper.id
  })

describe("LeftoverHelpers", () => {
  it.live(
    "removes a folder read's helper an engine killed with SIGKILL left; keeps another home's and this process's own",
    () =>
      Effect.gen(function* () {
        const home = yield* helperHome
        const otherHome = yield* helperHome
        const [left, otherLeft] = yield* Effect.all([killedMidRead(home), killedMidRead(otherHome)], {
          concurrency: 2
        })
        yield* Effect.scoped(
          Effect.gen(function* () {
            // This process's own helper, in use while the pass runs (made after this engine started).
            const runtime = yield* ContainerRuntime
            yield* runtime.readFolder(join(home, "read-me"), ".", { [TEST_RUN_LABEL]: inject("testRunId") })
            const own = helpersOf(home).find((helper) => helper.id !== left)
            assert.isDefined(own, "this process's read made a helper")

            // Reconcile and prune leave a helper alone: it may be in use (this one is).
            const reconciled = yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
            const touched = reconciled.passes.flatMap((pass) => pass.changes.map((change) => change.containerId))
            assert.notInclude(touched, own?.id, "reconcile reported this process's helper")
            assert.notInclude(touched, left, "reconcile reported the killed engine's helper")
            const pruned = yield* Effect.flatMap(Gc, (gc) => gc.planPrune)
            assert.deepStrictEqual(pruned.containers, [], "prune would remove a helper")

            const report = yield* Effect.flatMap(LeftoverHelpers, (helpers) => helpers.remove)
            assert.deepStrictEqual(report, { removed: [left], failures: [] })
            assert.isFalse(containerExists(left), "the killed engine's helper is still there")
            assert.isTrue(containerExists(otherLeft), "another home's helper was removed")
            assert.isTrue(containerExists(own?.id ?? ""), "this process's helper in use was removed")
          }).pipe(Effect.provide(engineLayer({ home, runId: inject("testRunId"), config: {} })))
        )
        assert.deepStrictEqual(helpersOf(home), [], "this process's helper outlived its read")
        assert.isTrue(containerExists(otherLeft), "another home's helper was removed")
      }).pipe(Effect.scoped),
    120_000
  )
})
