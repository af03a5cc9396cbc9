import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Deferred, Effect, Fiber } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, containersOf, openRunning, rowOf, statusTrail } from "./harness.ts"
import { type Gate, type Point, Probe, withProbe } from "./probe.ts"

/**
 * Guarantee 2, stop wins: a stop injected at each await point of a create
 * (and of a restart) ends with the row `stopped`, no container running, any
 * container that was made recorded on the row, no container step begun once
 * the stop was public, and no status write after the stop's own.
 */
interface Case {
  readonly point: Point
  readonly what: string
  /**
   * The point lies inside the container create+start step, which cannot be
   * interrupted: the stop waits for it, so the test lets the worker go on as
   * soon as the stop's intent is public. Elsewhere the stop interrupts the
   * worker while it is held.
   */
  readonly insideContainerStep: boolean
  /** A container exists once the stop won. */
  readonly container: boolean
}

const createCases: ReadonlyArray<Case> = [
  { point: "clone", what: "while the PR is fetched", insideContainerStep: false, container: false },
  { point: "pull", what: "while the image is ensured", insideContainerStep: false, container: false },
  { point: "beforeCreate", what: "just before the container is created", insideContainerStep: true, container: true },
  { point: "afterCreate", what: "just after the container was created", insideContainerStep: true, container: true },
  { point: "afterStart", what: "just after the container was started", insideContainerStep: true, container: true },
  { point: "health", what: "while waiting for health", insideContainerStep: false, container: true },
  { point: "hook", what: "during the onSandboxReady hook", insideContainerStep: false, container: true },
  { point: "setup", what: "during the setup commands", insideContainerStep: false, container: true }
]

const restartCases: ReadonlyArray<Case> = [
  { point: "beforeStart", what: "just before the container is started", insideContainerStep: true, container: true },
  { point: "afterStart", what: "just after the container was started", insideContainerStep: true, container: true },
  { point: "health", what: "while waiting for health", insideContainerStep: false, container: true },
  { point: "hook", what: "during the onSandboxReady hook", insideContainerStep: false, container: true }
]

// Every point of the table is on the path: a hook to run and a setup command.
const config = { setupCommands: ["true"], hooks: { onSandboxReady: ["true"] } }

/** Waits for the worker at the gate, stops the sandbox there, and returns what the stop returned. */
const stopAtGate = (id: SandboxId, gate: Gate, c: Case) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    const reached = yield* Effect.raceFirst(
      Deferred.await(gate.reached).pipe(Effect.as(true)),
      sandboxes.awaitIdle(id).pipe(Effect.as(false))
    )
    if (!reached) {
      const row = yield* rowOf(id)
      assert.fail(`the worker ended (${row.status}: ${row.error}) before reaching ${c.point}`)
    }
    const stopping = yield* Effect.forkChild(sandboxes.stop(id))
    yield* Deferred.await(gate.stopRequested)
    if (c.insideContainerStep) yield* gate.release
    const stopped = yield* Fiber.join(stopping).pipe(bounded(`the stop at ${c.point} did not return`))
    yield* sandboxes.awaitIdle(id).pipe(bounded("a worker outlived the stop"))
    return stopped
  })

const assertStopWon = (id: SandboxId, c: Case, probe: Probe, runningBefore: number) =>
  Effect.gen(function* () {
    const row = yield* rowOf(id)
    assert.strictEqual(row.status, "stopped", row.error ?? "")
    assert.isFalse(row.destroyFenced)
    assert.deepStrictEqual(containersOf(id, { all: false }), [], "a container of the sandbox is running")
    const all = containersOf(id, { all: true })
    if (c.container) {
      assert.isNotNull(row.containerId, "the container made before the stop is not recorded")
      assert.deepStrictEqual(all, [row.containerId], "a container of the sandbox is not the row's (orphan)")
    } else {
      assert.isNull(row.containerId)
      assert.deepStrictEqual(all, [])
    }
    const containerSteps = probe.afterLastStop().filter((call) => call === "provision" || call === "start")
    assert.deepStrictEqual(containerSteps, [], "a container step began after the stop was requested")
    const trail = yield* statusTrail(id)
    assert.deepStrictEqual(trail.slice(trail.lastIndexOf("stopping")), ["stopping", "stopped"], trail.join(" → "))
    assert.strictEqual(trail.filter((status) => status === "running").length, runningBefore, trail.join(" → "))
  })

describe("stop wins during a create", () => {
  for (const c of createCases) {
    it.live(`stop ${c.what} (${c.point})`, () => {
      const probe = new Probe()
      return withProbe(probe, { config }, ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const gate = probe.arm(c.point)
          const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
          const stopped = yield* stopAtGate(opened.id, gate, c)
          assert.strictEqual(stopped.status, "stopped")
          yield* assertStopWon(opened.id, c, probe, 0)
        })
      )
    })
  }
})

describe("stop wins during a restart", () => {
  for (const c of restartCases) {
    it.live(`stop ${c.what} (${c.point})`, () => {
      const probe = new Probe()
      return withProbe(probe, { config }, ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const running = yield* openRunning(remote.path, 1)
          yield* sandboxes.stop(running.id)
          const gate = probe.arm(c.point)
          const restarting = yield* sandboxes.restart(running.id)
          assert.strictEqual(restarting.status, "starting")
          const stopped = yield* stopAtGate(running.id, gate, c)
          assert.strictEqual(stopped.status, "stopped")
          yield* assertStopWon(running.id, c, probe, 1)
          assert.strictEqual((yield* rowOf(running.id)).containerId, running.containerId)
        })
      )
    })
  }
})
