import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  ContainerRuntime,
  Engines,
  Gc,
  Installation,
  LABELS,
  Reconciler,
  RuntimeError,
  SandboxService
} from "../src/index.ts"
import { inspectContainer, openRunning, rowOf, withEngine } from "./harness.ts"
import { isRunning, labelledContainer, newId, seedRow } from "./reconcile-fixtures.ts"

/** An engine address nothing answers on: the fail-closed case, with no real engine needed. */
const GONE = "unix:///nonexistent/docker.sock"

describe("engines: each row on its own engine", () => {
  it.live("a row on an unreachable engine is left as it is and reported; the local sandbox works throughout", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        assert.isNull((yield* Engines).current, "the local socket is recorded as null")
        // Stopped long ago: gc would remove it, and drift would look for its container.
        const elsewhere = yield* seedRow("stopped", { containerId: "f".repeat(64), stoppedAt: 1 }, { engine: GONE })
        const local = yield* openRunning(remote.path, 2)
        assert.isNull(local.engine)

        const report = yield* (yield* Reconciler).reconcile
        const failures = report.passes.flatMap((pass) => pass.failures)
        assert.deepStrictEqual(
          failures.map((f) => f.sandboxId),
          [elsewhere.id]
        )
        assert.include(failures[0]?.detail, `engine ${GONE}: cannot be reached`)
        assert.deepStrictEqual(yield* rowOf(elsewhere.id), elsewhere, "reconcile left it exactly as it was")
        assert.strictEqual((yield* rowOf(local.id)).status, "running")

        const gc = yield* Gc
        assert.deepStrictEqual(yield* gc.plan, { stop: [], remove: [] }, "gc skips the unreachable engine's rows")
        assert.deepStrictEqual((yield* gc.planPrune).containers, [], "prune sees only this engine's containers")

        const refused = yield* Effect.flip(sandboxes.delete(elsewhere.id))
        assert.instanceOf(refused, RuntimeError)
        assert.include(refused.message, GONE)
        assert.deepStrictEqual(yield* rowOf(elsewhere.id), elsewhere, "a refused rm writes nothing")
        const restart = yield* Effect.flip(sandboxes.restart(elsewhere.id))
        assert.include(restart.message, `lives on the Docker engine ${GONE}`)

        yield* sandboxes.stop(local.id)
        yield* sandboxes.delete(local.id)
        const all = yield* sandboxes.listAll
        assert.deepStrictEqual(
          all.map((row) => row.id),
          [elsewhere.id],
          "the other engine's row stays listed"
        )
      })
    )
  )
})

describe("engines: the configured engine's address is recorded", () => {
  // The local engine under another address: a configured engine this machine can run.
  const configured = { address: "unix:///run/docker.sock", source: "config" } as const

  it.live(
    "new rows record the configured address; a row of the local socket is reconciled and removed on its own",
    () =>
      withEngine({ engine: configured }, ({ home, remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          assert.strictEqual((yield* Engines).current, configured.address)
          const opened = yield* openRunning(remote.path, 1)
          assert.strictEqual(opened.engine, configured.address)

          // A row from before (null: the local socket) whose container runs: its own engine's pass keeps it.
          const sandboxId = newId()
          const containerId = yield* labelledContainer(home, sandboxId, { running: true })
          const state = yield* (yield* ContainerRuntime).state(containerId)
          const hostPort = state._tag === "Running" ? (state.hostPort ?? null) : null
          const older = yield* seedRow("running", { containerId, hostPort }, { pullRequest: 7, id: sandboxId })
          yield* (yield* Reconciler).reconcile
          assert.isTrue(yield* isRunning(containerId), "not taken for a container no row claims")
          assert.isTrue(yield* isRunning(opened.containerId ?? ""))

          yield* sandboxes.delete(older.id)
          yield* sandboxes.delete(opened.id)
          assert.deepStrictEqual(yield* sandboxes.listAll, [])
        })
      )
  )
})

describe("install id: a home's path shared by two installs", () => {
  it.live("reconcile and prune never touch another install's container; unlabelled ones of the home are adopted", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        const install = (yield* Installation).id
        const opened = yield* openRunning(remote.path, 1)
        assert.strictEqual(inspectContainer(opened.containerId ?? "").Config.Labels[LABELS.install], install)

        // The other machine's: same home path, another install id, no row here.
        const foreign = yield* labelledContainer(home, newId(), {
          running: true,
          labels: { [LABELS.install]: "another-install" }
        })
        // Made by this home before install ids: no install label.
        const unlabelled = yield* labelledContainer(home, newId(), { running: true })

        const report = yield* (yield* Reconciler).reconcile
        const touched = report.passes.flatMap((pass) => pass.changes.map((c) => c.containerId))
        assert.notInclude(touched, foreign)
        assert.include(touched, unlabelled)
        assert.isTrue(yield* isRunning(foreign), "another install's container keeps running")
        assert.isFalse(yield* isRunning(unlabelled), "an unowned container of this home is stopped, as before")

        const plan = yield* (yield* Gc).planPrune
        assert.deepStrictEqual(plan.containers, [unlabelled])
        yield* (yield* Gc).prune(plan)
        assert.isTrue(yield* isRunning(foreign))
        assert.strictEqual((yield* rowOf(opened.id)).status, "running")
      })
    )
  )
})
