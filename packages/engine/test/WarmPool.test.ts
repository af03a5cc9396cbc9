import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@prbox/domain"
import { Deferred, Effect, Fiber, Redacted } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { openRunning, rowOf, withEngine } from "./harness.ts"
import { devcontainer, logOf, POOL, primed } from "./pool-support.ts"
import { gitIn, removePrebuildsOf, shInContainer } from "./prebuild-support.ts"

const read = (row: Sandbox, file: string) => readFileSync(join(row.workspacePath ?? "", file), "utf8")

const exists = (containerId: string) =>
  execFileSync("docker", ["ps", "-aq", "--no-trunc", "--filter", `id=${containerId}`], { encoding: "utf8" }).trim() !==
  ""

/** code-server's login (the healthz stub's) on `port` with `password`: true when it lets the password in. */
const logsIn = (port: number | null, password: string) =>
  Effect.tryPromise(() =>
    fetch(`http://127.0.0.1:${port}/login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `password=${encodeURIComponent(password)}`
    }).then((response) => response.status === 302)
  )

const passwordOf = (row: Sandbox) => (row.accessPassword === null ? "" : Redacted.value(row.accessPassword))

describe("the warm pool", () => {
  it.live(
    "opens claim pool containers: each gets its PR's head, its own password (another's does not log in), the steps after onCreate; two concurrent opens never share one; the pool is refilled; a PR changing devcontainer.json skips it; gc removes idle ones",
    () =>
      withEngine({ config: POOL }, ({ home, remote }) =>
        Effect.gen(function* () {
          const { pool, base } = yield* primed(remote.path)
          const waiting = yield* pool.list
          assert.deepStrictEqual(
            waiting.map((e) => e.state),
            ["ready", "ready"]
          )
          const heads = [
            pushPullRequest(remote.path, 1, { "pr.txt": "one" }),
            pushPullRequest(remote.path, 2, { "pr.txt": "two" })
          ]
          const [one, two] = yield* Effect.all([openRunning(remote.path, 1), openRunning(remote.path, 2)], {
            concurrency: 2
          })
          if (one === undefined || two === undefined) return assert.fail("two opens")
          const byId = new Map(waiting.map((e) => [e.id as string, e]))
          assert.notStrictEqual(one.id, two.id)
          assert.notStrictEqual(one.containerId, two.containerId)
          for (const [row, head, n] of [
            [one, heads[0], "one"],
            [two, heads[1], "two"]
          ] as const) {
            const entry = byId.get(row.id)
            assert.isDefined(entry, "the sandbox is a pool container, by its id")
            assert.strictEqual(row.containerId, entry?.containerId)
            assert.strictEqual(row.hostPort, entry?.hostPort, "its URL is the pool container's port")
            assert.include(yield* logOf(row), "from the warm pool")
            assert.strictEqual(gitIn(row, "rev-parse", "HEAD"), head)
            assert.strictEqual(gitIn(row, "symbolic-ref", "--short", "HEAD"), `pr-${row.pullRequest}`)
            assert.strictEqual(gitIn(row, "config", "remote.origin.url"), remote.path)
            assert.strictEqual(read(row, "pr.txt"), n)
            assert.strictEqual(
              read(row, "deps/made"),
              `made-on-${base.slice(0, 7)}\n`,
              "onCreate ran once, in the prebuild"
            )
            assert.strictEqual(read(row, "deps/log"), `update-base\nupdate-${n}\n`, "updateContent ran again on the PR")
            assert.strictEqual(shInContainer(row, 'cat "$HOME/.cache/made"'), "home-made", "onCreate's home, kept")
            assert.strictEqual(read(row, "post.txt"), "post\n")
          }
          assert.isTrue(yield* logsIn(one.hostPort, passwordOf(one)), "its own password logs in")
          assert.isFalse(yield* logsIn(one.hostPort, passwordOf(two)), "another pool container's does not")
          assert.isFalse(yield* logsIn(two.hostPort, passwordOf(one)))

          yield* pool.settled
          const refilled = yield* pool.list
          assert.lengthOf(refilled, 2, "refilled after the claims")
          for (const entry of refilled) assert.isFalse(byId.has(entry.id), "a claimed container never returns")

          pushPullRequest(remote.path, 5, {
            ".devcontainer/devcontainer.json": devcontainer.replace("post.txt", "post5.txt")
          })
          const changed = yield* openRunning(remote.path, 5)
          assert.notInclude(yield* logOf(changed), "warm pool")
          assert.isFalse(refilled.some((e) => e.id === changed.id))
          assert.lengthOf(yield* pool.list, 2, "the pool is untouched by a PR of another environment")

          const fresh = yield* pool.collect(Date.now())
          assert.deepStrictEqual(fresh.changes, [], "fresh ones stay")
          const idle = yield* pool.collect(Date.now() + 31 * 60_000)
          assert.lengthOf(idle.changes, 2, idle.failures.join("; "))
          assert.lengthOf(yield* pool.list, 0)
          for (const entry of refilled) assert.isFalse(exists(entry.containerId ?? ""), "its container is removed")
          assert.isTrue(
            exists(one.containerId ?? ""),
            "a claimed one is the sandbox's: gc of the pool never touches it"
          )
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    600_000
  )

  it.live(
    "stop wins over a claim: a stop while the PR's commits are brought in leaves the sandbox stopped, its container never back in the pool; gc of the pool meanwhile never removes it",
    () => {
      const paused = Deferred.makeUnsafe<void>()
      const release = Deferred.makeUnsafe<void>()
      let armed = false
      return withEngine(
        {
          config: POOL,
          workspaces: (real) => ({
            ...real,
            bundleCommit: (...args: Parameters<typeof real.bundleCommit>) =>
              armed
                ? Effect.andThen(
                    Effect.andThen(Deferred.succeed(paused, undefined), Deferred.await(release)),
                    real.bundleCommit(...args)
                  )
                : real.bundleCommit(...args)
          })
        },
        ({ home, remote }) =>
          Effect.gen(function* () {
            const { pool } = yield* primed(remote.path)
            const [entry] = yield* pool.list
            pushPullRequest(remote.path, 1, { "pr.txt": "one" })
            armed = true
            const sandboxes = yield* SandboxService
            const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
            yield* Deferred.await(paused)
            assert.strictEqual(opened.id, entry?.id, "claimed")
            const gc = yield* pool.collect(Date.now() + 90 * 60_000)
            assert.isFalse(
              gc.changes.some((line) => line.startsWith(opened.id)),
              "the claimed container is not the pool's to remove"
            )
            assert.isTrue(exists(entry?.containerId ?? ""))
            const stopping = yield* Effect.forkChild(sandboxes.stop(opened.id))
            yield* Deferred.succeed(release, undefined)
            yield* Fiber.join(stopping)
            yield* sandboxes.awaitIdle(opened.id)
            const row = yield* rowOf(opened.id)
            assert.strictEqual(row.status, "stopped")
            assert.strictEqual(row.containerId, entry?.containerId)
            const state = execFileSync("docker", ["inspect", "-f", "{{.State.Running}}", row.containerId ?? ""], {
              encoding: "utf8"
            }).trim()
            assert.strictEqual(state, "false")
            const left = yield* pool.list
            assert.isFalse(
              left.some((e) => e.id === opened.id),
              "never back in the pool"
            )
          }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      )
    },
    600_000
  )
})
