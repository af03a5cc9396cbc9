import { execFileSync } from "node:child_process"
import { statSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { SandboxService } from "../src/index.ts"
import { bounded, inspectContainer, rowOf, withEngine } from "./harness.ts"
import { healthz, login, passwordOf } from "./probe.ts"

/** The same open as Open.test.ts, against the real code-server image. */
describe("open with the real code-server", () => {
  it.live(
    "runs code-server as a non-root user behind its password",
    () =>
      withEngine({ config: { image: imageTag(codeServerImage), healthTimeoutSeconds: 150 } }, ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
          yield* sandboxes.awaitIdle(opened.id).pipe(bounded("code-server did not come up", 170))
          const row = yield* rowOf(opened.id)
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.strictEqual(row.sourceCommit, remote.pr1)

          // Tests run as root, so the workspace was root's: it is handed to uid 1000, never run as root.
          const info = inspectContainer(row.containerId ?? "")
          assert.strictEqual(info.Config.User, "1000:1000")
          assert.strictEqual(statSync(row.workspacePath ?? "").uid, 1000)
          const init = execFileSync("docker", ["exec", row.containerId ?? "", "cat", "/proc/1/status"], {
            encoding: "utf8"
          })
          assert.match(init, /^Uid:\s+1000\s+1000\s+1000\s+1000$/m, "the container's process is not uid 1000")

          const port = row.hostPort ?? 0
          const health = yield* healthz(port)
          assert.strictEqual(health.status, 200)
          // code-server says "expired" until a client's heartbeat makes it "alive".
          assert.include(["alive", "expired"], health.body.status)
          const good = yield* login(port, passwordOf(row))
          assert.strictEqual(good.status, 302)
          const bad = yield* login(port, `${passwordOf(row)}x`)
          assert.notStrictEqual(bad.status, 302)
        })
      ),
    200_000
  )
})
