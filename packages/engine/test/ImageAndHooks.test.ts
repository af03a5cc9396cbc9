import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent } from "@prbox/domain"
import { Deferred, Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, healthzTag, openRunning, openSettled, rowOf, withEngine } from "./harness.ts"
import { Probe, withProbe } from "./probe.ts"

/** The settled row and its log lines. */
const openAndWait = (input: string, pr: number) =>
  Effect.gen(function* () {
    const row = yield* openSettled(input, pr)
    const log = yield* (yield* SandboxService).logs(row.id, { limit: 500 })
    return { row, lines: log.map(describeEvent) }
  })

/** A `latest` tag of the local test image: prbox tries to pull it (no registry answers here). */
const localLatest = Effect.acquireRelease(
  Effect.sync(() => {
    const tag = `prbox-test/local-${randomBytes(4).toString("hex")}:latest`
    execFileSync("docker", ["tag", healthzTag, tag])
    return tag
  }),
  (tag) => Effect.sync(() => execFileSync("docker", ["rmi", tag], { stdio: "ignore" }))
)

describe("image", () => {
  it.live("a failed pull of a locally present image continues with it and says so", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const image = yield* localLatest
        const { row, lines } = yield* withEngine({ config: { image } }, ({ remote }) => openAndWait(remote.path, 1))
        assert.strictEqual(row.status, "running", row.error ?? "")
        assert.isTrue(
          lines.some((line) => line.startsWith(`could not pull ${image}`) && line.endsWith("using the local copy"))
        )
      })
    )
  )

  it.live("an absent image that cannot be pulled fails the open with the reason", () =>
    withEngine({ config: { image: "prbox-test/never-built:latest" } }, ({ remote }) =>
      Effect.gen(function* () {
        const { row } = yield* openAndWait(remote.path, 1)
        assert.strictEqual(row.status, "error")
        assert.match(row.error ?? "", /image\.pull|pull/)
        assert.isNull(row.containerId)
      })
    )
  )
})

describe("hooks", () => {
  it.live("the ready hook gets the sandbox in its environment; a failing hook is logged, not fatal", () => {
    const out = join(tmpdir(), `prbox-hook-${randomBytes(4).toString("hex")}.env`)
    const hooks = { onSandboxReady: ["sh", "-c", `env | grep ^PRBOX_ > ${out}; exit 3`] }
    return withEngine({ config: { hooks } }, ({ remote }) =>
      Effect.gen(function* () {
        const { row, lines } = yield* openAndWait(remote.path, 1)
        assert.strictEqual(row.status, "running", row.error ?? "")
        const env = readFileSync(out, "utf8")
        assert.include(env, `PRBOX_SANDBOX_ID=${row.id}`)
        assert.include(env, `PRBOX_PORT=${row.hostPort}`)
        assert.include(env, `PRBOX_URL=http://127.0.0.1:${row.hostPort}/`)
        assert.include(env, `PRBOX_WORKSPACE=${row.workspacePath}`)
        assert.notInclude(env, "PASSWORD")
        assert.include(lines, "onSandboxReady hook failed: exit 3")
      })
    ).pipe(Effect.ensuring(Effect.sync(() => rmSync(out, { force: true }))))
  })

  /** A destroy hook that writes its sandbox id to a file of its own; the file is removed afterwards. */
  const destroyHook = () => {
    const out = join(tmpdir(), `prbox-destroy-hook-${randomBytes(4).toString("hex")}`)
    const hooks = { onSandboxDestroy: ["sh", "-c", `echo "$PRBOX_SANDBOX_ID" >> ${out}`] }
    return { out, hooks, cleanup: Effect.sync(() => rmSync(out, { force: true })) }
  }

  it.live("the destroy hook runs when a sandbox with a container is stopped", () => {
    const { out, hooks, cleanup } = destroyHook()
    return withEngine({ config: { hooks } }, ({ remote }) =>
      Effect.gen(function* () {
        const running = yield* openRunning(remote.path, 1)
        yield* (yield* SandboxService).stop(running.id)
        assert.strictEqual(readFileSync(out, "utf8"), `${running.id}\n`)
      })
    ).pipe(Effect.ensuring(cleanup))
  })

  it.live("the destroy hook does not run when the stopped sandbox never had a container", () => {
    const { out, hooks, cleanup } = destroyHook()
    const probe = new Probe()
    return withProbe(probe, { config: { hooks } }, ({ remote }) =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        const cloning = probe.arm("clone")
        const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
        yield* Deferred.await(cloning.reached).pipe(bounded("the create never reached its clone"))
        const stopped = yield* sandboxes.stop(opened.id)
        assert.strictEqual(stopped.status, "stopped")
        assert.isNull((yield* rowOf(opened.id)).containerId)
        assert.isFalse(existsSync(out), "the destroy hook ran for a sandbox without a container")
        assert.strictEqual(probe.count("hook:onSandboxDestroy"), 0)
      })
    ).pipe(Effect.ensuring(cleanup))
  })
})
