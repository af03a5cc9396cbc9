import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent, type Sandbox } from "@prbox/domain"
import { Deferred, Effect, Schedule } from "effect"
import { Reconciler, SandboxService } from "../src/index.ts"
import { bounded, containersOf, docker, healthzTag, openSettled, rowOf, withEngine } from "./harness.ts"
import { Probe, withProbe } from "./probe.ts"

/** The lines a setup command appended to `file` in the sandbox's workspace (none when it never ran). */
const linesOf = (row: Sandbox, file: string): Array<string> => {
  const path = join(row.workspacePath ?? "", file)
  return existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.length > 0)
    : []
}

const logLines = (row: Sandbox) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(row.id, { limit: 1000 })).pipe(
    Effect.map((events) => events.map(describeEvent))
  )

/** Restarts a stopped sandbox and waits for its worker: the row as it then stands. */
const restartSettled = (row: Sandbox) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    yield* sandboxes.restart(row.id)
    yield* sandboxes.awaitIdle(row.id).pipe(bounded("the restart did not finish"))
    return yield* rowOf(row.id)
  })

/** The test image with an entrypoint that runs and prints, but never serves code-server's port. */
const silentImage = Effect.acquireRelease(
  Effect.sync(() => {
    const tag = `prbox-test/silent:${randomBytes(4).toString("hex")}`
    const entrypoint = ["/bin/sh", "-c", "echo 'silent: not serving'; trap 'exit 0' TERM INT; sleep 3600 & wait"]
    execFileSync("docker", ["build", "--quiet", "--tag", tag, "-"], {
      input: `FROM ${healthzTag}\nENTRYPOINT ${JSON.stringify(entrypoint)}\n`,
      stdio: ["pipe", "ignore", "pipe"]
    })
    return tag
  }),
  (tag) => Effect.sync(() => execFileSync("docker", ["rmi", tag], { stdio: "ignore" }))
)

describe("setup", () => {
  it.live("a failed step ends the setup but not the sandbox: it runs, says why, and exec gets in", () => {
    const setupCommands = ["echo first >> steps.txt", "echo broken step; exit 3", "echo third >> steps.txt"]
    return withEngine({ config: { setupCommands } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const row = yield* openSettled(remote.path, 1)
        assert.strictEqual(row.status, "running", row.error ?? "")
        assert.isNull(row.error)
        assert.strictEqual(row.setupError, "setup [2/3] failed with exit code 3")
        // The later step was skipped.
        assert.deepStrictEqual(linesOf(row, "steps.txt"), ["first"])
        const lines = yield* logLines(row)
        assert.include(lines, "[2/3] broken step")
        assert.include(lines, "setup [2/3] failed with exit code 3; setup ended there")
        assert.isFalse(lines.some((line) => line.startsWith("[3/3]")))
        assert.strictEqual(lines.at(-1), "status: running")

        // The user can get in and fix it.
        const fix = yield* sandboxes.exec(row.id, ["sh", "-c", "echo fixed >> steps.txt"], {
          timeoutMs: 10_000,
          maxOutputBytes: 1024
        })
        assert.strictEqual(fix.exitCode, 0, fix.stdout + fix.stderr)
        assert.deepStrictEqual(linesOf(row, "steps.txt"), ["first", "fixed"])

        // Reconcile leaves it running.
        yield* (yield* Reconciler).reconcile
        assert.strictEqual((yield* rowOf(row.id)).status, "running")
        assert.deepStrictEqual(containersOf(row.id, { all: false }), [row.containerId])
      })
    )
  })

  it.live("create-time steps run once per container: not on restart, again on a container made anew", () => {
    // Fails until the user has fixed the workspace; counts its runs either way.
    const setupCommands = ["echo run >> runs.txt; test -f fixed"]
    return withEngine({ config: { setupCommands } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const created = yield* openSettled(remote.path, 1)
        assert.strictEqual(created.setupError, "setup [1/1] failed with exit code 1")
        assert.deepStrictEqual(linesOf(created, "runs.txt"), ["run"])
        yield* sandboxes.exec(created.id, ["touch", "fixed"], { timeoutMs: 10_000, maxOutputBytes: 1024 })

        // Same container: the setup does not run again, and its outcome stays.
        yield* sandboxes.stop(created.id)
        const restarted = yield* restartSettled(created)
        assert.strictEqual(restarted.status, "running", restarted.error ?? "")
        assert.strictEqual(restarted.containerId, created.containerId)
        assert.deepStrictEqual(linesOf(created, "runs.txt"), ["run"])
        assert.strictEqual(restarted.setupError, "setup [1/1] failed with exit code 1")

        // The container vanished: the restart makes a new one and runs the setup on it, which now succeeds.
        yield* sandboxes.stop(created.id)
        docker("rm", "-f", created.containerId ?? "")
        const recreated = yield* restartSettled(created)
        assert.strictEqual(recreated.status, "running", recreated.error ?? "")
        assert.notStrictEqual(recreated.containerId, created.containerId)
        assert.deepStrictEqual(linesOf(created, "runs.txt"), ["run", "run"])
        assert.isNull(recreated.setupError)
      })
    )
  })

  it.live("a setup cut short by a stop is not taken for done: the restarted sandbox says it did not finish", () => {
    const probe = new Probe()
    return withProbe(probe, { config: { setupCommands: ["echo run >> runs.txt"] } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const gate = probe.arm("setup")
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* Deferred.await(gate.reached).pipe(bounded("the setup was not reached"))
        const stopped = yield* sandboxes.stop(opened.id)
        assert.strictEqual(stopped.status, "stopped")

        const restarted = yield* restartSettled(stopped)
        assert.strictEqual(restarted.status, "running", restarted.error ?? "")
        assert.strictEqual(restarted.containerId, stopped.containerId)
        assert.strictEqual(restarted.setupError, "setup did not finish (interrupted)")
        assert.deepStrictEqual(linesOf(restarted, "runs.txt"), [])
      })
    )
  })

  it.live("the setup runs beside code-server's start: its commands are done while the health wait is held", () => {
    const probe = new Probe()
    return withProbe(probe, { config: { setupCommands: ["echo run >> runs.txt"] } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const gate = probe.arm("health")
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* Deferred.await(gate.reached).pipe(bounded("the health wait was not reached"))
        // code-server has not answered (its probe is held): the setup must get done meanwhile.
        const ran = yield* rowOf(opened.id).pipe(
          Effect.flatMap((row) => (linesOf(row, "runs.txt").length > 0 ? Effect.succeed(row) : Effect.fail("not yet"))),
          Effect.retry(Schedule.spaced("100 millis")),
          bounded("the setup while the health wait is held", 60),
          Effect.orDie
        )
        assert.strictEqual(ran.status, "starting")
        yield* gate.release
        yield* sandboxes.awaitIdle(opened.id).pipe(bounded("the open did not finish"))
        const row = yield* rowOf(opened.id)
        assert.strictEqual(row.status, "running", row.error ?? "")
        assert.isNull(row.setupError)
        assert.deepStrictEqual(linesOf(row, "runs.txt"), ["run"])
      })
    )
  })
})

describe("health timeout", () => {
  it.live("code-server never answering is an error: the worker stops its container and the logs stay", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const image = yield* silentImage
        yield* withEngine({ config: { image, healthTimeoutSeconds: 1 } }, ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openSettled(remote.path, 1)
            assert.strictEqual(row.status, "error")
            assert.strictEqual(row.error, "code-server did not answer within 1 s")
            assert.isNotNull(row.containerId)
            // Stopped, not removed: the container and its output are still there.
            assert.deepStrictEqual(containersOf(row.id, { all: true }), [row.containerId])
            assert.deepStrictEqual(containersOf(row.id, { all: false }), [])
            const output = execFileSync("docker", ["logs", row.containerId ?? ""], { encoding: "utf8" })
            assert.include(output, "silent: not serving")
            const lines = yield* logLines(row)
            assert.include(lines, "waiting for code-server to answer")
            assert.strictEqual(lines.at(-1), "status: error (code-server did not answer within 1 s)")
          })
        )
      })
    )
  )
})
