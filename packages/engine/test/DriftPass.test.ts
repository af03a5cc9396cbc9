import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Deferred, Effect, Fiber, Latch } from "effect"
import { DiscoveryFailed, Reconciler, RuntimeError, SandboxService } from "../src/index.ts"
import { openRunning, rowOf, withEngine } from "./harness.ts"
import { isRunning, labelledContainer, newId, seedRow } from "./reconcile-fixtures.ts"

const docker = (...args: ReadonlyArray<string>) => execFileSync("docker", args, { stdio: "ignore" })

const reconcile = Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
const drift = Effect.map(reconcile, (report) => report.passes.find((pass) => pass.pass === "drift"))

describe("drift pass", () => {
  it.live("a create step with no worker and no container is orphaned", () =>
    withEngine({}, () =>
      Effect.gen(function* () {
        const row = yield* seedRow("cloning")
        const report = yield* drift
        const after = yield* rowOf(row.id)
        assert.strictEqual(after.status, "error")
        assert.strictEqual(after.error, "orphaned (no container)")
        assert.deepStrictEqual(
          report?.changes.map((c) => c.sandboxId),
          [row.id]
        )
      })
    )
  )

  it.live("a container created but never recorded is stopped and recorded on the orphaned row", () =>
    withEngine({}, ({ home }) =>
      Effect.gen(function* () {
        const row = yield* seedRow("starting")
        const containerId = yield* labelledContainer(home, row.id, { running: true })
        yield* reconcile
        const after = yield* rowOf(row.id)
        assert.strictEqual(after.status, "error")
        assert.strictEqual(after.containerId, containerId)
        assert.isFalse(yield* isRunning(containerId))
      })
    )
  )

  it.live("a removed container: the row is stopped and forgets it, and a new open runs again", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        docker("rm", "-f", row.containerId ?? "")
        yield* reconcile
        const after = yield* rowOf(row.id)
        assert.strictEqual(after.status, "stopped")
        assert.isNull(after.containerId)
        const again = yield* openRunning(remote.path, 1)
        assert.strictEqual(again.id, row.id, "the stopped sandbox (and its workspace) is reused")
        assert.notStrictEqual(again.containerId, row.containerId)
      })
    )
  )

  it.live("a running row whose container exited is recorded stopped", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const row = yield* openRunning(remote.path, 1)
        docker("stop", "-t", "1", row.containerId ?? "")
        yield* reconcile
        const after = yield* rowOf(row.id)
        assert.strictEqual(after.status, "stopped")
        assert.strictEqual(after.containerId, row.containerId)
        assert.isNotNull(after.stoppedAt)
      })
    )
  )

  it.live("an interrupted stop is finished; an ended row's running container is stopped", () =>
    withEngine({}, ({ home }) =>
      Effect.gen(function* () {
        const repo = yield* SandboxRepo
        // Each row records its running container, as a stop cut short and an ended row would.
        const withContainer = (status: "stopping" | "error", pullRequest: number) =>
          Effect.gen(function* () {
            const row = yield* seedRow(status, {}, { pullRequest })
            const containerId = yield* labelledContainer(home, row.id, { running: true })
            yield* repo.updateStatus(row.id, { to: status, containerId })
            return { id: row.id, containerId }
          })
        const stopping = yield* withContainer("stopping", 2)
        const ended = yield* withContainer("error", 3)
        const report = yield* drift
        assert.strictEqual((yield* rowOf(stopping.id)).status, "stopped")
        assert.isFalse(yield* isRunning(stopping.containerId))
        assert.strictEqual((yield* rowOf(ended.id)).status, "error")
        assert.isFalse(yield* isRunning(ended.containerId))
        // The branches the name describes, and no other (the rows are listed in no set order).
        const changes = new Map(report?.changes.map((c) => [c.sandboxId, [c.containerId, c.action]]))
        assert.strictEqual(changes.size, 2)
        assert.deepStrictEqual(changes.get(stopping.id), [stopping.containerId, "finished an interrupted stop"])
        assert.deepStrictEqual(changes.get(ended.id), [ended.containerId, "stopped a container of an ended sandbox"])
      })
    )
  )

  it.live("a labelled container with no row is stopped and reported, not removed", () =>
    withEngine({}, ({ home }) =>
      Effect.gen(function* () {
        const containerId = yield* labelledContainer(home, newId(), { running: true })
        const report = yield* drift
        assert.isFalse(yield* isRunning(containerId))
        assert.include(report?.changes.map((c) => c.containerId) ?? [], containerId)
        docker("inspect", containerId)
      })
    )
  )

  it.live("Docker that cannot be listed aborts the pass with a typed error and changes nothing", () =>
    withEngine(
      {
        runtime: (real) => ({
          ...real,
          listByLabel: () => Effect.fail(new RuntimeError({ operation: "docker", detail: "engine unavailable" }))
        })
      },
      () =>
        Effect.gen(function* () {
          const row = yield* seedRow("cloning")
          const error = yield* Effect.flip(reconcile)
          assert.instanceOf(error, DiscoveryFailed)
          assert.strictEqual((yield* rowOf(row.id)).status, "cloning")
        })
    )
  )

  it.live("one row that cannot be fixed is reported and left as it was; the others are fixed", () => {
    const stuck = new Set<string>()
    return withEngine(
      {
        runtime: (real) => ({
          ...real,
          stop: (containerId) =>
            stuck.has(containerId)
              ? Effect.fail(new RuntimeError({ operation: "docker", detail: "stop timed out" }))
              : real.stop(containerId)
        })
      },
      ({ home }) =>
        Effect.gen(function* () {
          const bad = yield* seedRow("stopping", {}, { pullRequest: 2 })
          const badContainer = yield* labelledContainer(home, bad.id, { running: true })
          stuck.add(badContainer)
          const orphan = yield* seedRow("creating", {}, { pullRequest: 3 })
          const report = yield* drift
          assert.deepStrictEqual(
            report?.failures.map((f) => f.sandboxId),
            [bad.id]
          )
          assert.strictEqual((yield* rowOf(bad.id)).status, "stopping")
          assert.strictEqual((yield* rowOf(orphan.id)).status, "error")
        })
    )
  })

  it.live("a row whose worker is still active is left to its worker", () =>
    Effect.gen(function* () {
      const reached = yield* Deferred.make<void>()
      const release = yield* Latch.make()
      return yield* withEngine(
        {
          workspaces: (real) => ({
            ...real,
            createWorkspace: (options) =>
              Deferred.succeed(reached, undefined).pipe(
                Effect.andThen(release.await),
                Effect.andThen(real.createWorkspace(options))
              )
          })
        },
        ({ remote }) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
            yield* Deferred.await(reached)
            const reconciling = yield* Effect.forkChild(reconcile)
            const report = yield* Fiber.join(reconciling)
            assert.strictEqual((yield* rowOf(opened.id)).status, "cloning")
            assert.isEmpty(report.passes.flatMap((pass) => pass.changes))
            yield* release.open
            yield* sandboxes.awaitIdle(opened.id as SandboxId)
            assert.strictEqual((yield* rowOf(opened.id)).status, "running")
          })
      )
    })
  )
})
