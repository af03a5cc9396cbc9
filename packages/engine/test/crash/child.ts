/**
 * The engine in a process of its own, driven to one crash phase. When the
 * phase is reached it prints `PHASE <name>` (synchronously, so the line is
 * never still buffered) and blocks forever; the parent test then kills it
 * with SIGKILL. Nothing here sleeps or guesses a timing.
 *
 * Usage: node child.ts <phase>, with PRBOX_HOME, PRBOX_CRASH_REMOTE,
 * PRBOX_CRASH_RUN_ID and PRBOX_CRASH_IMAGE in the environment.
 */
import { writeSync } from "node:fs"
import { Migrations } from "@prbox/store"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { Reconciler, RuntimeError, SandboxService } from "../../src/index.ts"
import { engineLayer } from "../engine-layer.ts"
import { CHILD_ENV, isPhase, type Phase, PULL_REQUEST, phaseLine, runChild } from "./phases.ts"

const phase = process.argv[2]
if (!isPhase(phase)) throw new Error(`usage: child.ts <phase> (got ${String(phase)})`)
const env = (name: string): string => {
  const value = process.env[name]
  if (value === undefined || value === "") throw new Error(`${name} is not set`)
  return value
}
const home = env(CHILD_ENV.home)
const remote = env(CHILD_ENV.remote)

const signal = (reached: Phase) => writeSync(1, `${phaseLine(reached)}\n`)
/** Announces the phase, then never returns: the process is killed right here. */
const halt = Effect.suspend(() => {
  signal(phase)
  return Effect.never
})

/**
 * Mid-migration: the schema migration is one synchronous better-sqlite3
 * transaction inside the store, with no hook to pause it. The child patches
 * the module's `exec` (the store shares this module instance) so that, once
 * the v2 DDL ran inside the still-open transaction, the thread blocks
 * synchronously: the kill lands before the COMMIT, every time.
 */
if (phase === "mid-migration") {
  const exec = Database.prototype.exec
  Database.prototype.exec = function (this: Database.Database, source: string) {
    const result = exec.call(this, source)
    if (source === Migrations.V2_SCHEMA) {
      writeSync(1, `${phaseLine(phase)} inTransaction=${String(this.inTransaction)}\n`)
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)
    }
    return result
  }
}

const openToRunning = Effect.gen(function* () {
  const sandboxes = yield* SandboxService
  const opened = yield* sandboxes.open({ input: remote, pr: PULL_REQUEST })
  yield* sandboxes.awaitIdle(opened.id)
  const row = yield* sandboxes.get(opened.id)
  if (row.status !== "running") return yield* Effect.die(new Error(`not running: ${row.status} ${row.error ?? ""}`))
  return row
})

const drive = Effect.gen(function* () {
  const sandboxes = yield* SandboxService
  switch (phase) {
    case "after-row-insert":
    case "mid-clone":
    case "after-create-before-start":
    case "after-start-before-running":
      yield* sandboxes.open({ input: remote, pr: PULL_REQUEST })
      return yield* Effect.never
    case "mid-stop": {
      const row = yield* openToRunning
      yield* sandboxes.stop(row.id)
      return yield* Effect.die(new Error("the stop returned; the wrapped runtime.stop should have halted it"))
    }
    case "mid-retirement":
      yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
      return yield* Effect.die(new Error("reconcile returned; the wrapped runtime.stop should have halted it"))
    case "mid-destroy": {
      const row = yield* openToRunning
      yield* sandboxes.delete(row.id)
      return yield* Effect.die(new Error("the delete returned; the wrapped runtime.destroy should have halted it"))
    }
    case "mid-gc-cleanup": {
      const row = yield* openToRunning
      yield* sandboxes.stop(row.id)
      yield* sandboxes.delete(row.id)
      return yield* Effect.die(new Error("cleanup returned; the wrapped runtime.destroy should have halted it"))
    }
    case "fenced": {
      const row = yield* openToRunning
      yield* sandboxes.stop(row.id)
      const refused = yield* Effect.flip(sandboxes.delete(row.id))
      if (refused._tag !== "DestroyNotConfirmed") return yield* Effect.die(refused)
      return yield* halt
    }
    case "mid-migration":
      // Building the layer opened the store; the patched exec never returns.
      return yield* Effect.die(new Error("the store opened; the migration should have halted"))
  }
})

const layer = engineLayer({
  home,
  runId: env(CHILD_ENV.runId),
  config: { image: env(CHILD_ENV.image) },
  lifecycle: (real) => ({
    ...real,
    // The row was inserted (`creating`); the worker's first write never happens.
    advance: (id, to, fields) =>
      phase === "after-row-insert" && to === "cloning" ? halt : real.advance(id, to, fields)
  }),
  workspaces: (real) => ({
    ...real,
    // The PR was fetched into the mirror; the workspace clone never starts.
    createWorkspace: (options) => (phase === "mid-clone" ? halt : real.createWorkspace(options))
  }),
  runtime: (real) => ({
    ...real,
    provision: (spec, onProgress) =>
      phase === "after-create-before-start"
        ? Effect.andThen(real.provision(spec, onProgress), halt)
        : real.provision(spec, onProgress),
    start: (containerId) =>
      phase === "after-start-before-running" ? Effect.andThen(real.start(containerId), halt) : real.start(containerId),
    // The row is `stopping` (or marked retiring); Docker is never asked.
    stop: (containerId) => (phase === "mid-stop" || phase === "mid-retirement" ? halt : real.stop(containerId)),
    // Mid-destroy: Docker was asked (the row's fence is written first) and never answered.
    destroy: (containerId, options) =>
      phase === "mid-destroy"
        ? halt
        : phase === "mid-gc-cleanup"
          ? Effect.andThen(real.destroy(containerId, options), halt)
          : phase === "fenced"
            ? Effect.fail(
                new RuntimeError({ operation: "container.remove", detail: "injected: no answer from Docker" })
              )
            : real.destroy(containerId, options)
  })
})

runChild(phase, drive.pipe(Effect.provide(layer)))
