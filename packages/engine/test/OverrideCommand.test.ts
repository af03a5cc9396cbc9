import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { inspectContainer, openRunning, withEngine } from "./harness.ts"
import { login, passwordOf } from "./probe.ts"
import { devUserTag, inContainer } from "./user-image.ts"

/**
 * `overrideCommand` and `init` on a real engine. The image's CMD writes its
 * own pid to /tmp/image-cmd and keeps running (`exec sleep infinity`).
 */
const cmdlineOf = (containerId: string, pid: string) =>
  inContainer(containerId, `tr '\\0' ' ' < /proc/${pid}/cmdline`).trim()

const initOf = (containerId: string): boolean =>
  (inspectContainer(containerId).HostConfig as { readonly Init?: boolean | null }).Init === true

describe("overrideCommand and init", () => {
  it.live("overrideCommand false: the image's CMD is the main process (PID 1, no init), and code-server answers", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const image = yield* devUserTag
        pushPullRequest(remote.path, 1, {
          ".devcontainer/devcontainer.json": JSON.stringify({ image, overrideCommand: false })
        })
        const row = yield* openRunning(remote.path, 1)
        const id = row.containerId ?? assert.fail("no container")
        assert.strictEqual(inContainer(id, "cat /tmp/image-cmd"), "1")
        assert.strictEqual(cmdlineOf(id, "1"), "sleep infinity")
        assert.isFalse(initOf(id))
        const answer = yield* login(row.hostPort ?? 0, passwordOf(row))
        assert.strictEqual(answer.status, 302)
      })
    )
  )

  it.live(
    "overrideCommand false with init: Docker's init is PID 1, the image's CMD runs under it, code-server answers",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const image = yield* devUserTag
          pushPullRequest(remote.path, 2, {
            ".devcontainer/devcontainer.json": JSON.stringify({ image, overrideCommand: false, init: true })
          })
          const row = yield* openRunning(remote.path, 2)
          const id = row.containerId ?? assert.fail("no container")
          assert.isTrue(initOf(id))
          const pid = inContainer(id, "cat /tmp/image-cmd")
          assert.notStrictEqual(pid, "1")
          assert.strictEqual(cmdlineOf(id, pid), "sleep infinity")
          assert.match(cmdlineOf(id, "1"), /init/)
          const answer = yield* login(row.hostPort ?? 0, passwordOf(row))
          assert.strictEqual(answer.status, 302)
        })
      )
  )

  it.live("by default code-server is the main process under Docker's init, and the image's CMD does not run", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const image = yield* devUserTag
        pushPullRequest(remote.path, 3, {
          ".devcontainer/devcontainer.json": JSON.stringify({ image, init: true })
        })
        const row = yield* openRunning(remote.path, 3)
        const id = row.containerId ?? assert.fail("no container")
        assert.isTrue(initOf(id))
        assert.strictEqual(inContainer(id, "test -e /tmp/image-cmd && echo ran || echo not"), "not")
        assert.match(cmdlineOf(id, "1"), /init/)
        // prbox's code-server holds the password's hash only, and the password logs in.
        const env = inspectContainer(id).Config.Env ?? []
        assert.isTrue(env.some((entry) => entry.startsWith("HASHED_PASSWORD=$argon2id$")))
        assert.isFalse(env.some((entry) => entry.startsWith("PASSWORD=")))
        assert.notInclude(JSON.stringify(inspectContainer(id)), passwordOf(row))
        assert.strictEqual((yield* login(row.hostPort ?? 0, passwordOf(row))).status, 302)
        assert.notStrictEqual((yield* login(row.hostPort ?? 0, `${passwordOf(row)}x`)).status, 302)
      })
    )
  )
})
