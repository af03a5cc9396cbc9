import { existsSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { type SandboxId, statePaths } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Effect, Option } from "effect"
import { SandboxService } from "../src/index.ts"
import { containersOf, docker, openRunning, rowOf } from "./harness.ts"
import { Probe, withProbe } from "./probe.ts"

/** A running sandbox of PR 1, with its workspace on disk. */
const openRunningWithWorkspace = (input: string) =>
  Effect.tap(openRunning(input, 1), (row) =>
    Effect.sync(() => {
      assert.isNotNull(row.workspacePath)
      assert.isTrue(existsSync(row.workspacePath ?? ""))
    })
  )

/** Nothing of the sandbox is left: no row, no container, no workspace, no home. */
const assertGone = (id: SandboxId, workspacePath: string | null, home: string) =>
  Effect.gen(function* () {
    const repo = yield* SandboxRepo
    assert.isTrue(Option.isNone(yield* repo.findById(id)), "the row is still there")
    assert.deepStrictEqual(containersOf(id, { all: true }), [], "a container is still there")
    assert.isFalse(existsSync(workspacePath ?? ""), "the workspace is still there")
    assert.isFalse(existsSync(statePaths(home).sandbox(id).root), "the sandbox's folder (its home) is still there")
  })

/** Cleanup deletes container, workspace and row; a removal Docker does not confirm leaves the fence. */
describe("cleanup", () => {
  it.live("removes the container, the workspace and the row", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote, home }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const row = yield* openRunningWithWorkspace(remote.path)
        assert.isTrue(existsSync(statePaths(home).sandbox(row.id).home))
        yield* sandboxes.delete(row.id)
        yield* assertGone(row.id, row.workspacePath, home)
      })
    )
  })

  it.live("succeeds when the container is already gone", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote, home }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const row = yield* openRunningWithWorkspace(remote.path)
        docker("rm", "-f", row.containerId ?? "")
        yield* sandboxes.delete(row.id)
        yield* assertGone(row.id, row.workspacePath, home)
      })
    )
  })

  it.live("a removal that fails fences the row until a later cleanup succeeds", () => {
    const probe = new Probe()
    return withProbe(probe, {}, ({ remote, home }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const row = yield* openRunningWithWorkspace(remote.path)
        probe.fault("destroy", true)
        const failure = yield* Effect.flip(sandboxes.delete(row.id))
        assert.strictEqual(failure._tag, "DestroyNotConfirmed")
        const fenced = yield* rowOf(row.id)
        // The stop was confirmed (the row says `stopped`); the removal was not.
        assert.strictEqual(fenced.status, "stopped")
        assert.strictEqual(fenced.error, "container removal not confirmed by Docker")
        assert.isTrue(fenced.destroyFenced)
        assert.strictEqual(fenced.containerId, row.containerId)
        // The container was stopped, not removed; the workspace is kept until the removal is confirmed.
        assert.deepStrictEqual(containersOf(row.id, { all: false }), [])
        assert.deepStrictEqual(containersOf(row.id, { all: true }), [row.containerId])
        assert.isTrue(existsSync(row.workspacePath ?? ""))
        const refused = yield* Effect.flip(sandboxes.restart(row.id))
        assert.strictEqual(refused._tag, "SandboxConflict")
        const exec = yield* Effect.flip(sandboxes.exec(row.id, ["true"], { timeoutMs: 5_000, maxOutputBytes: 1024 }))
        assert.strictEqual(exec._tag, "SandboxConflict")
        assert.include(exec.message, "not confirmed")

        // A stop (confirmed: the container is stopped) does not lift a destroy's fence.
        const stopped = yield* sandboxes.stop(row.id)
        assert.isTrue(stopped.destroyFenced)
        assert.isTrue((yield* rowOf(row.id)).destroyFenced)
        assert.strictEqual((yield* Effect.flip(sandboxes.restart(row.id)))._tag, "SandboxConflict")

        probe.fault("destroy", false)
        yield* sandboxes.delete(row.id)
        yield* assertGone(row.id, row.workspacePath, home)
      })
    )
  })
})
