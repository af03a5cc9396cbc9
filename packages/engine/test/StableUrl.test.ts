import { createServer, type Server } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox, SandboxId } from "@prbox/domain"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { inject } from "vitest"
import { PREVIEW_RELAY_PORT } from "../src/CodeServerSpec.ts"
import { Gc, Reconciler, SandboxService } from "../src/index.ts"
import { engineLayer } from "./engine-layer.ts"
import {
  bounded,
  containersOf,
  docker,
  healthzTag,
  inspectContainer,
  openRunning,
  rowOf,
  withEngine
} from "./harness.ts"
import { healthz } from "./probe.ts"

/** Restarts the sandbox and waits for it: the row as it then stands, which must be running. */
const restarted = (id: SandboxId) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    yield* sandboxes.restart(id)
    yield* sandboxes.awaitIdle(id).pipe(bounded("the restart did not finish"))
    const row = yield* rowOf(id)
    assert.strictEqual(row.status, "running", row.error ?? "")
    return row
  })

/**
 * The row serves code-server on `port`, and its container publishes exactly
 * there, on 127.0.0.1 (its preview relay's port too, where Docker picks).
 */
const servesOn = (row: Sandbox, port: number | null) =>
  Effect.gen(function* () {
    assert.isNotNull(port)
    assert.strictEqual(row.hostPort, port)
    const bindings = inspectContainer(row.containerId ?? "").HostConfig.PortBindings
    assert.deepStrictEqual(bindings["8080/tcp"], [{ HostIp: "127.0.0.1", HostPort: String(port) }])
    assert.deepStrictEqual(bindings[`${PREVIEW_RELAY_PORT}/tcp`], [{ HostIp: "127.0.0.1", HostPort: "" }])
    assert.strictEqual((yield* healthz(port ?? 0)).status, 200)
  })

/** A listener holding 127.0.0.1:`port` until the test's scope closes. */
const holdPort = (port: number) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createServer()
      server.listen(port, "127.0.0.1", () => resume(Effect.succeed(server)))
    }),
    (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
  )

describe("stable URL: a sandbox keeps its host port for life", () => {
  it.live("stop then restart publishes on the same port", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const running = yield* openRunning(remote.path, 1)
        yield* servesOn(running, running.hostPort)
        yield* (yield* SandboxService).stop(running.id)
        assert.strictEqual((yield* rowOf(running.id)).hostPort, running.hostPort)

        const again = yield* restarted(running.id)
        assert.strictEqual(again.containerId, running.containerId)
        yield* servesOn(again, running.hostPort)
      })
    )
  )

  it.live("gc's idle stop, then a reopen, keeps the port", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const gc = yield* Gc
        const running = yield* openRunning(remote.path, 1)
        const now = yield* Clock.currentTimeMillis
        const report = yield* Effect.andThen(TestClock.setTime(now + 3_600_000), gc.run()).pipe(
          Effect.provide(TestClock.layer())
        )
        assert.deepStrictEqual(report.stopped, [running.id])
        assert.strictEqual((yield* rowOf(running.id)).status, "stopped")

        const reopened = yield* openRunning(remote.path, 1)
        assert.strictEqual(reopened.id, running.id)
        yield* servesOn(reopened, running.hostPort)
      })
    )
  )

  it.live("a fresh engine on the same home (a daemon restart) reconciles and restarts on the same port", () =>
    withEngine({}, ({ home, remote }) =>
      Effect.gen(function* () {
        const running = yield* openRunning(remote.path, 1)
        yield* (yield* SandboxService).stop(running.id)

        const again = yield* Effect.gen(function* () {
          yield* (yield* Reconciler).reconcile
          return yield* restarted(running.id)
        }).pipe(Effect.provide(engineLayer({ home, runId: inject("testRunId"), config: { image: healthzTag } })))
        yield* servesOn(again, running.hostPort)
      })
    )
  )

  it.live("a container removed behind prbox's back is recreated on the same port", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const running = yield* openRunning(remote.path, 1)
        docker("rm", "-f", running.containerId ?? "")

        // Reconcile forgets the container but keeps the port...
        yield* (yield* Reconciler).reconcile
        const gone = yield* rowOf(running.id)
        assert.strictEqual(gone.status, "stopped")
        assert.isNull(gone.containerId)
        assert.strictEqual(gone.hostPort, running.hostPort)

        // ...which the new container asks for.
        const again = yield* restarted(running.id)
        assert.notStrictEqual(again.containerId, running.containerId)
        yield* servesOn(again, running.hostPort)

        // Gone without a reconcile in between: the restart itself recreates it on the port.
        yield* (yield* SandboxService).stop(running.id)
        docker("rm", "-f", again.containerId ?? "")
        const third = yield* restarted(running.id)
        assert.notStrictEqual(third.containerId, again.containerId)
        yield* servesOn(third, running.hostPort)
      })
    )
  )

  it.live("a port taken meanwhile moves the sandbox to a new one and says so", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const running = yield* openRunning(remote.path, 1)
        const taken = running.hostPort ?? 0
        yield* sandboxes.stop(running.id)
        const moved = yield* Effect.scoped(Effect.andThen(holdPort(taken), restarted(running.id)))
        assert.notStrictEqual(moved.hostPort, taken)
        yield* servesOn(moved, moved.hostPort)
        // The old container (bound to the taken port) is replaced, not left behind.
        assert.deepStrictEqual(containersOf(running.id, { all: true }), [moved.containerId])
        const line = `port ${taken} was taken; the sandbox moved to http://127.0.0.1:${moved.hostPort}/`
        const events = yield* sandboxes.logs(running.id, { limit: 1000 })
        assert.isTrue(
          events.some((event) => event._tag === "Progress" && event.line === line),
          `no progress line "${line}"`
        )
        assert.strictEqual(moved.detail, `ready at http://127.0.0.1:${moved.hostPort}/ (port ${taken} was taken)`)

        // The new port is kept from now on.
        yield* sandboxes.stop(running.id)
        yield* servesOn(yield* restarted(running.id), moved.hostPort)
      })
    )
  )
})
