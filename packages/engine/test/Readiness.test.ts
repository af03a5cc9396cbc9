import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { SandboxService } from "../src/index.ts"
import { bounded, healthzTag, openSettled, rowOf, withEngine } from "./harness.ts"
import { Probe, withProbe } from "./probe.ts"

/** code-server's own line, as it logs it once its HTTP server listens. */
const LISTENING = "[2026-12-01T00:00:00.000Z] info  HTTP server listening on http://0.0.0.0:8080/"

/** The test image with `script` as its entrypoint (the stand-in's server is /srv/prbox/entrypoint.sh). */
const scriptedImage = (name: string, script: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const tag = `prbox-test/${name}:${randomBytes(4).toString("hex")}`
      execFileSync("docker", ["build", "--quiet", "--tag", tag, "-"], {
        input: `FROM ${healthzTag}\nENTRYPOINT ${JSON.stringify(["/bin/sh", "-c", script])}\n`,
        stdio: ["pipe", "ignore", "pipe"]
      })
      return tag
    }),
    (tag) => Effect.sync(() => execFileSync("docker", ["rmi", tag], { stdio: "ignore" }))
  )

describe("readiness", () => {
  it.live("code-server saying it listens is not enough: the sandbox is ready only when /healthz answers", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const image = yield* scriptedImage(
          "says-listening",
          `echo '${LISTENING}'; trap 'exit 0' TERM INT; sleep 3600 & wait`
        )
        yield* withEngine({ config: { image, healthTimeoutSeconds: 2 } }, ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openSettled(remote.path, 1).pipe(bounded("the open did not end"))
            assert.strictEqual(row.status, "error")
            assert.strictEqual(row.error, "code-server did not answer within 2 s")
          })
        )
      })
    )
  )

  it.live("a code-server that never logs its listening line is found by the probes", () => {
    const probe = new Probe()
    return Effect.scoped(
      Effect.gen(function* () {
        // Says nothing code-server would; serves once the test puts .serve in its workspace (its working folder).
        const image = yield* scriptedImage(
          "serves-on-latch",
          "while [ ! -e .serve ]; do sleep 0.05; done; exec /bin/sh /srv/prbox/entrypoint.sh"
        )
        yield* withProbe(probe, { config: { image, healthTimeoutSeconds: 60 } }, ({ remote }) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            const first = probe.arm("health")
            const second = probe.arm("health")
            const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
            yield* Deferred.await(first.reached).pipe(bounded("no probe came"))
            yield* first.release
            // The first probe found nothing listening; with no line heard, the next one still comes.
            yield* Deferred.await(second.reached).pipe(bounded("no second probe came", 10))
            writeFileSync(join((yield* rowOf(opened.id)).workspacePath ?? "", ".serve"), "")
            yield* second.release
            yield* sandboxes.awaitIdle(opened.id).pipe(bounded("the open did not end"))
            const row = yield* rowOf(opened.id)
            assert.strictEqual(row.status, "running", row.error ?? "")
          })
        )
      })
    )
  })

  it.live("a container that exits is an error at once, not at the health timeout", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const image = yield* scriptedImage("exits", "echo 'exiting: no code-server here'; exit 3")
        yield* withEngine({ config: { image, healthTimeoutSeconds: 600 } }, ({ remote }) =>
          Effect.gen(function* () {
            const row = yield* openSettled(remote.path, 1).pipe(bounded("the open waited for the health timeout"))
            assert.strictEqual(row.status, "error")
            assert.strictEqual(row.error, "code-server did not answer: its container exited")
          })
        )
      })
    )
  )

  it.live("a restarted container's earlier listening line does not count: only this start's output does", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // Serves on its first run; a second run (the restart) exits without a word.
        const script = `[ -e /tmp/ran ] && exit 3; : > /tmp/ran; echo '${LISTENING}'; exec /bin/sh /srv/prbox/entrypoint.sh`
        const image = yield* scriptedImage("serves-once", script)
        yield* withEngine({ config: { image, healthTimeoutSeconds: 600 } }, ({ remote }) =>
          Effect.gen(function* () {
            const sandboxes = yield* SandboxService
            const opened = yield* openSettled(remote.path, 1).pipe(bounded("the open did not end"))
            assert.strictEqual(opened.status, "running", opened.error ?? "")
            yield* sandboxes.stop(opened.id)
            yield* sandboxes.restart(opened.id)
            yield* sandboxes.awaitIdle(opened.id).pipe(bounded("the restart waited for the health timeout"))
            const restarted = yield* rowOf(opened.id)
            assert.strictEqual(restarted.containerId, opened.containerId)
            assert.strictEqual(restarted.status, "error")
            assert.strictEqual(restarted.error, "code-server did not answer: its container exited")
          })
        )
      })
    )
  )
})
