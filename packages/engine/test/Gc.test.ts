import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { statePaths } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Clock, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import {
  CleanupIncomplete,
  DiscoveryFailed,
  Gc,
  Installation,
  LABELS,
  RuntimeError,
  SandboxService
} from "../src/index.ts"
import { docker, later, openRunning, rowOf, withEngine } from "./harness.ts"
import { labelledContainer, newId, seedRow } from "./reconcile-fixtures.ts"

const HOUR = 3_600_000

const containerExists = (id: string): boolean => {
  try {
    execFileSync("docker", ["inspect", id], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** A volume on the local engine with `labels` (and this run's), removed when the test ends. */
const labelledVolume = (labels: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const name = `prbox-test-${randomBytes(4).toString("hex")}`
      const all = { ...labels, [TEST_RUN_LABEL]: inject("testRunId") }
      execFileSync("docker", [
        "volume",
        "create",
        ...Object.entries(all).flatMap(([key, value]) => ["--label", `${key}=${value}`]),
        name
      ])
      return name
    }),
    (name) => Effect.sync(() => execFileSync("docker", ["volume", "rm", "-f", name], { stdio: "ignore" }))
  )

const volumeExists = (name: string): boolean => {
  try {
    execFileSync("docker", ["volume", "inspect", name], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Sandbox volumes of this install with and without a row, another install's, and a shared one (no sandbox). */
const volumesToPrune = Effect.gen(function* () {
  const install = (yield* Installation).id
  const row = yield* seedRow("stopped")
  return {
    orphan: yield* labelledVolume({ [LABELS.sandbox]: newId(), [LABELS.install]: install }),
    owned: yield* labelledVolume({ [LABELS.sandbox]: row.id, [LABELS.install]: install }),
    foreign: yield* labelledVolume({ [LABELS.sandbox]: newId(), [LABELS.install]: "another-install" }),
    shared: yield* labelledVolume({ [LABELS.install]: install })
  }
})

describe("gc", () => {
  it.live("a dry run changes nothing; the confirmed run stops the idle and deletes the long-stopped", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const gc = yield* Gc
        const idle = yield* openRunning(remote.path, 1)
        const ended = yield* openRunning(remote.path, 2)
        yield* sandboxes.stop(ended.id)
        const plan = yield* later(25 * HOUR, gc.plan)
        assert.deepStrictEqual(plan, { stop: [idle.id], remove: [ended.id] })
        assert.strictEqual((yield* rowOf(idle.id)).status, "running")
        assert.strictEqual((yield* rowOf(ended.id)).status, "stopped")

        const report = yield* later(25 * HOUR, gc.run(plan))
        assert.deepStrictEqual(report.stopped, [idle.id])
        assert.deepStrictEqual(report.removed, [ended.id])
        assert.strictEqual((yield* rowOf(idle.id)).status, "stopped")
        assert.isTrue(Option.isNone(yield* (yield* SandboxRepo).findById(ended.id)))
        assert.isFalse(containerExists(ended.containerId ?? ""))
        assert.isFalse(existsSync(ended.workspacePath ?? "/nonexistent-never"))
      })
    )
  )

  it.live("code-server's heartbeat counts as activity", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const row = yield* openRunning(remote.path, 1)
        const now = yield* Clock.currentTimeMillis
        execFileSync("docker", [
          "exec",
          row.containerId ?? "",
          "sh",
          "-c",
          `echo ${now + 2 * HOUR} > /tmp/prbox-heartbeat`
        ])
        const plan = yield* later(2 * HOUR + 10 * 60_000, gc.plan)
        assert.deepStrictEqual(plan.stop, [])
        const withoutHeartbeat = yield* later(3 * HOUR, gc.plan)
        assert.deepStrictEqual(withoutHeartbeat.stop, [row.id])
      })
    )
  )

  it.live("a confirmed plan is revalidated: a sandbox used since it was shown is left alone", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const sandboxes = yield* SandboxService
        const row = yield* openRunning(remote.path, 1)
        const shown = yield* later(HOUR, gc.plan)
        assert.deepStrictEqual(shown.stop, [row.id])
        yield* later(HOUR, sandboxes.touch(row.id))
        const report = yield* later(HOUR + 60_000, gc.run(shown))
        assert.deepStrictEqual(report.stopped, [])
        assert.strictEqual((yield* rowOf(row.id)).status, "running")
      })
    )
  )

  it.live("a failed removal is reported, fails the run, fences that sandbox and still reports the others", () => {
    const stuck = new Set<string>()
    return withEngine(
      {
        runtime: (real) => ({
          ...real,
          destroy: (containerId, options) =>
            stuck.has(containerId)
              ? Effect.fail(new RuntimeError({ operation: "docker", detail: "remove timed out" }))
              : real.destroy(containerId, options)
        })
      },
      ({ remote }) =>
        Effect.gen(function* () {
          const gc = yield* Gc
          const sandboxes = yield* SandboxService
          const failing = yield* openRunning(remote.path, 1)
          const removable = yield* openRunning(remote.path, 2)
          stuck.add(failing.containerId ?? "")
          yield* sandboxes.stop(failing.id)
          yield* sandboxes.stop(removable.id)
          const error = yield* Effect.flip(later(25 * HOUR, gc.run()))
          assert.instanceOf(error, CleanupIncomplete)
          assert.deepStrictEqual(
            error.failures.map((f) => f.sandboxId),
            [failing.id]
          )
          assert.deepStrictEqual(error.removed, [removable.id])
          assert.isTrue((yield* rowOf(failing.id)).destroyFenced)
          assert.isTrue(Option.isNone(yield* (yield* SandboxRepo).findById(removable.id)))
        })
    )
  })

  it.live("uncertainty counts as activity: nonsense, a malformed heartbeat or no answer keeps an idle sandbox", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const row = yield* openRunning(remote.path, 1)
        const containerId = row.containerId ?? ""
        // The test image serves /tmp/prbox-healthz, when present, as its /healthz answer.
        const answer = (body: string) =>
          execFileSync("docker", ["exec", containerId, "sh", "-c", 'printf %s "$1" > /tmp/prbox-healthz', "sh", body])

        answer("not json")
        assert.deepStrictEqual((yield* later(3 * HOUR, gc.run())).stopped, [])
        assert.strictEqual((yield* rowOf(row.id)).status, "running")
        answer('{"status":"alive","lastHeartbeat":"recently"}')
        assert.deepStrictEqual((yield* later(3 * HOUR, gc.plan)).stop, [])
        answer('{"status":"alive"}')
        assert.deepStrictEqual((yield* later(3 * HOUR, gc.plan)).stop, [])
        // code-server's "expired" form with an old heartbeat is a confirmed-idle answer.
        answer('{"status":"expired","lastHeartbeat":0}')
        assert.deepStrictEqual((yield* later(3 * HOUR, gc.plan)).stop, [row.id])
        // Nothing answers on the port (the container was killed behind prbox's back).
        docker("kill", containerId)
        assert.deepStrictEqual((yield* later(3 * HOUR, gc.plan)).stop, [])
      })
    )
  )

  it.live("the gc timer runs a pass every gcIntervalMinutes (TestClock; probes answered by the test)", () => {
    // Once the sandbox runs, each pass probes it once: the count of probes is the count of passes.
    // Answered here, not over HTTP, so that a pass does no real I/O and TestClock.adjust runs it to the end.
    let counting = false
    let passes = 0
    return withEngine(
      {
        config: { gcIntervalMinutes: 7 },
        health: (real) => ({
          probe: (hostPort) =>
            counting
              ? Effect.sync(() => {
                  passes += 1
                  return { lastHeartbeat: Date.now() }
                })
              : real.probe(hostPort)
        })
      },
      ({ remote }) =>
        Effect.gen(function* () {
          const gc = yield* Gc
          yield* openRunning(remote.path, 1)
          counting = true
          yield* Effect.gen(function* () {
            const timer = yield* Effect.forkChild(gc.timer)
            yield* TestClock.adjust("6 minutes")
            assert.strictEqual(passes, 0)
            yield* TestClock.adjust("1 minute")
            assert.strictEqual(passes, 1)
            yield* TestClock.adjust("13 minutes")
            assert.strictEqual(passes, 2)
            yield* TestClock.adjust("1 minute")
            assert.strictEqual(passes, 3)
            yield* Fiber.interrupt(timer)
          }).pipe(Effect.provide(TestClock.layer()))
        })
    )
  })

  it.live("prune fails closed: a listing that fails (a path that is a file) aborts it and removes nothing", () =>
    withEngine({}, ({ home }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const stray = yield* labelledContainer(home, newId(), { running: false })
        const strayDir = join(home, "workspaces", newId())
        mkdirSync(strayDir, { recursive: true })
        mkdirSync(join(home, "homes"), { recursive: true })
        const shown = yield* gc.planPrune
        assert.deepStrictEqual(shown, { containers: [stray], volumes: [], directories: [strayDir] })
        // Tests run as root, so no permission denial: a file where the directory was gives ENOTDIR.
        rmSync(join(home, "homes"), { recursive: true })
        writeFileSync(join(home, "homes"), "")
        const error = yield* Effect.flip(gc.prune(shown))
        assert.instanceOf(error, DiscoveryFailed)
        assert.strictEqual(error.detail, "ENOTDIR")
        assert.isTrue(containerExists(stray), "nothing is removed")
        assert.isTrue(existsSync(strayDir), "nothing is removed")
      })
    )
  )

  it.live("prune removes a stray sandbox folder (its sealed folder cleared by the engine) and a stray file there", () =>
    withEngine({}, ({ home }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const paths = statePaths(home)
        const stray = paths.sandbox(newId())
        mkdirSync(join(stray.workspace, "deep"), { recursive: true })
        writeFileSync(join(stray.workspace, "deep", "file"), "")
        chmodSync(stray.sealed ?? "", 0o700)
        const strayFile = join(paths.sandboxes, "not-a-sandbox")
        writeFileSync(strayFile, "")
        const shown = yield* gc.planPrune
        assert.sameMembers([...shown.directories], [stray.root, strayFile])
        const report = yield* gc.prune(shown)
        assert.sameMembers([...report.removed.directories], [stray.root, strayFile])
        assert.isFalse(existsSync(stray.root))
        assert.isFalse(existsSync(strayFile))
      })
    )
  )

  it.live("prune fails closed: a container listing that fails aborts it and removes nothing", () => {
    let dockerDown = false
    return withEngine(
      {
        runtime: (real) => ({
          ...real,
          listByLabel: (labels) =>
            dockerDown
              ? Effect.fail(new RuntimeError({ operation: "docker", detail: "engine unreachable" }))
              : real.listByLabel(labels)
        })
      },
      ({ home }) =>
        Effect.gen(function* () {
          const gc = yield* Gc
          const stray = yield* labelledContainer(home, newId(), { running: false })
          const strayDir = join(home, "workspaces", newId())
          mkdirSync(strayDir, { recursive: true })
          const shown = yield* gc.planPrune
          dockerDown = true
          const error = yield* Effect.flip(gc.prune(shown))
          assert.instanceOf(error, DiscoveryFailed)
          assert.isTrue(containerExists(stray), "nothing is removed")
          assert.isTrue(existsSync(strayDir), "nothing is removed")
        })
    )
  })

  it.live("prune removes only what was shown and is still unreferenced", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const kept = yield* openRunning(remote.path, 1)
        const stray = yield* labelledContainer(home, newId(), { running: false })
        const strayDir = join(home, "workspaces", newId())
        mkdirSync(strayDir, { recursive: true })
        const shown = yield* gc.planPrune
        assert.deepStrictEqual(shown, { containers: [stray], volumes: [], directories: [strayDir] })
        const lateDir = join(home, "homes", newId())
        mkdirSync(lateDir, { recursive: true })
        const report = yield* gc.prune(shown)
        assert.deepStrictEqual(report.plan, shown)
        assert.deepStrictEqual(report.removed, shown)
        assert.isFalse(containerExists(stray))
        assert.isFalse(existsSync(strayDir))
        assert.isTrue(existsSync(lateDir), "a directory that was not shown is not removed")
        assert.isTrue(containerExists(kept.containerId ?? ""))
        assert.isTrue(existsSync(kept.workspacePath ?? ""))
      })
    )
  )

  it.live("prune removes this install's sandbox volumes no row claims; another install's and the shared one stay", () =>
    withEngine({}, () =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const { orphan, owned, foreign, shared } = yield* volumesToPrune
        const shown = yield* gc.planPrune
        assert.deepStrictEqual(shown, { containers: [], volumes: [orphan], directories: [] })
        const report = yield* gc.prune(shown)
        assert.deepStrictEqual(report.removed, shown)
        assert.isFalse(volumeExists(orphan))
        for (const name of [owned, foreign, shared]) assert.isTrue(volumeExists(name), name)
      }).pipe(Effect.scoped)
    )
  )

  it.live("prune fails closed: a volume listing that fails aborts it and removes nothing", () => {
    let listingFails = false
    return withEngine(
      {
        runtime: (real) => ({
          ...real,
          listFilesByLabel: (labels) =>
            listingFails
              ? Effect.fail(new RuntimeError({ operation: "volume.list", detail: "engine unreachable" }))
              : real.listFilesByLabel(labels)
        })
      },
      () =>
        Effect.gen(function* () {
          const gc = yield* Gc
          const { orphan } = yield* volumesToPrune
          const shown = yield* gc.planPrune
          assert.deepStrictEqual(shown.volumes, [orphan])
          listingFails = true
          const error = yield* Effect.flip(gc.prune(shown))
          assert.instanceOf(error, DiscoveryFailed)
          assert.isTrue(volumeExists(orphan), "nothing is removed")
        }).pipe(Effect.scoped)
    )
  })
})
