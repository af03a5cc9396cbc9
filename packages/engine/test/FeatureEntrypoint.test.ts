import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { healthzTag, openSettled, rowOf, withEngine } from "./harness.ts"

// A feature's `entrypoint` (recorded in the image's devcontainer.metadata
// label) runs when the container starts, before code-server and the
// lifecycle steps, at every start: a local feature whose entrypoint starts a
// background process, on the real engine.

const inContainer = (containerId: string, script: string): string =>
  execFileSync("docker", ["exec", containerId, "sh", "-c", script], { encoding: "utf8" }).trim()

/** Installed as /usr/local/share/bg-entry.sh: counts its runs, starts a background process, and returns. */
const entrypoint = [
  "#!/bin/sh",
  "echo started >> /tmp/entrypoint-runs",
  "sh -c 'echo $$ > /tmp/bg.pid; exec sleep 86400' &"
].join("\n")

const files = {
  ".devcontainer/devcontainer.json": JSON.stringify({
    image: DefaultImage.DEFAULT_IMAGE,
    features: { "./bg": {}, "./second": {} },
    // A lifecycle step sees what the entrypoints did: they ran before it.
    postCreateCommand: "cat /tmp/entrypoint-runs /tmp/second-entry > /tmp/seen-by-step"
  }),
  ".devcontainer/bg/devcontainer-feature.json": JSON.stringify({
    id: "bg",
    entrypoint: "/usr/local/share/bg-entry.sh"
  }),
  ".devcontainer/bg/install.sh": `#!/bin/sh\nset -e\ncat > /usr/local/share/bg-entry.sh <<'EOF'\n${entrypoint}\nEOF\nchmod 755 /usr/local/share/bg-entry.sh\n`,
  // A second feature's entrypoint: each one runs.
  ".devcontainer/second/devcontainer-feature.json": JSON.stringify({
    id: "second",
    entrypoint: "echo second-entry > /tmp/second-entry"
  }),
  ".devcontainer/second/install.sh": "#!/bin/sh\ntrue\n"
}

/** The background process the entrypoint started, as the kernel names it (empty: not running). */
const background = (containerId: string) =>
  inContainer(containerId, 'cat "/proc/$(cat /tmp/bg.pid)/cmdline" | tr "\\0" " "')

describe("a feature's entrypoint", () => {
  it.live(
    "runs when the container starts, before code-server and the lifecycle steps, and again after a restart",
    () =>
      withEngine({ config: { image: healthzTag } }, ({ remote }) =>
        Effect.gen(function* () {
          pushPullRequest(remote.path, 91, files)
          const row = yield* openSettled(remote.path, 91)
          assert.strictEqual(row.status, "running", row.error ?? "")
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(inContainer(id, "cat /tmp/seen-by-step"), "started\nsecond-entry")
          assert.strictEqual(background(id), "sleep 86400")

          const sandboxes = yield* SandboxService
          yield* sandboxes.stop(row.id)
          yield* sandboxes.restart(row.id)
          yield* sandboxes.awaitIdle(row.id)
          const restarted = yield* rowOf(row.id)
          assert.strictEqual(restarted.status, "running", restarted.error ?? "")
          assert.strictEqual(restarted.containerId, id)
          assert.strictEqual(inContainer(id, "cat /tmp/entrypoint-runs"), "started\nstarted")
          assert.strictEqual(background(id), "sleep 86400")
        })
      ),
    600_000
  )
})
