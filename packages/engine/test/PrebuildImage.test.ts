import { execFileSync } from "node:child_process"
import { assert, describe, it } from "@effect/vitest"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { gitSync, pushPullRequest } from "../../git/test/helpers.ts"
import { MakePrebuild, PREBUILD_HOME_LABEL, PrebuildCleanup, PrebuildSpares, SandboxService } from "../src/index.ts"
import { openRunning, withEngine } from "./harness.ts"
import { openUsrLocalImage, removePrebuildsOf, shInContainer } from "./prebuild-support.ts"

const lines = (args: ReadonlyArray<string>) =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/** onCreate installs a tool under /usr/local and fills a cache in the home: neither is in the workspace. */
const devcontainer = () =>
  JSON.stringify({
    image: openUsrLocalImage(),
    onCreateCommand: [
      "printf '#!/bin/sh\\necho prebuilt-tool\\n' > /usr/local/bin/prebuilt-tool",
      "chmod +x /usr/local/bin/prebuilt-tool",
      'mkdir -p "$HOME/.cache/deps"',
      'echo cached-on-$(git rev-parse --short HEAD) > "$HOME/.cache/deps/made"'
    ].join(" && "),
    updateContentCommand: "true"
  })

describe("a prebuild keeps what its steps changed outside the workspace", () => {
  it.live(
    "a tool installed under /usr/local and a file in the home are in the sandbox of the next PR; gc keeps the image while a sandbox is made from it, then removes it and its volumes",
    () =>
      // A cap far below any prebuild: gc removes each one it may.
      withEngine({ config: { prebuilds: { maxGiB: 1e-9, keepDays: 7 } } }, ({ home, remote }) =>
        Effect.gen(function* () {
          const base = pushPullRequest(remote.path, 90, { ".devcontainer/devcontainer.json": devcontainer() })
          gitSync(remote.path, "update-ref", "refs/heads/main", base)
          pushPullRequest(remote.path, 3, { "three.txt": "3" })
          const first = yield* openRunning(remote.path, 3)
          yield* (yield* MakePrebuild).settled
          const [made] = yield* (yield* PrebuildRepo).list
          assert.strictEqual(made?.state, "ready", made?.error ?? "no prebuild")
          const image = made?.image ?? ""
          assert.lengthOf(lines(["images", "-q", image]), 1)

          pushPullRequest(remote.path, 1, { "pr.txt": "one" })
          const row = yield* openRunning(remote.path, 1)
          assert.strictEqual(shInContainer(row, "prebuilt-tool"), "prebuilt-tool", "the tool onCreate installed")
          assert.strictEqual(shInContainer(row, 'cat "$HOME/.cache/deps/made"'), `cached-on-${base.slice(0, 7)}`)
          assert.strictEqual(shInContainer(row, "cat pr.txt"), "one")
          assert.strictEqual(shInContainer(row, 'stat -c %a "$HOME"'), "700", "the home stays the sandbox user's alone")
          assert.notInclude(
            lines(["ps", "-aq", "--no-trunc", "--filter", `label=${PREBUILD_HOME_LABEL}=${home}`]),
            row.containerId,
            "a sandbox made from the image is never found as a prebuild's container"
          )
          const cleanup = yield* PrebuildCleanup
          // Its spare made (another open would take it): gc then removes it with the prebuild.
          yield* (yield* PrebuildSpares).settled
          assert.deepStrictEqual((yield* cleanup.reconcile()).changes, [], "reconcile leaves the sandbox be")
          assert.strictEqual(shInContainer(row, "echo alive"), "alive")

          const kept = yield* cleanup.collect()
          assert.deepStrictEqual(kept, { changes: [], failures: [] }, "its image is in use: nothing removed")
          assert.lengthOf(yield* (yield* PrebuildRepo).list, 1)

          const sandboxes = yield* SandboxService
          yield* sandboxes.delete(row.id)
          yield* sandboxes.delete(first.id)
          const removed = yield* cleanup.collect()
          assert.deepStrictEqual(removed.failures, [])
          assert.deepStrictEqual(
            removed.changes.map((change) => change.replace(/ \(.*\)$/, "")),
            [`${made?.id}: removed`, `${made?.id}: spare removed`]
          )
          assert.lengthOf(yield* (yield* PrebuildRepo).list, 0)
          assert.deepStrictEqual(lines(["images", "-q", image]), [], "its image is gone")
          assert.deepStrictEqual(
            lines(["volume", "ls", "-q", "--filter", `label=${PREBUILD_HOME_LABEL}=${home}`]),
            [],
            "its workspace and home volumes are gone"
          )
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    300_000
  )
})
