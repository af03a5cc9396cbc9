import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import type { SandboxId } from "@prbox/domain"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { UPDATE_UID_DOCKERFILE } from "../src/environment/RemoteUserUid.ts"
import { SandboxService } from "../src/index.ts"
import { openRunning, withEngine } from "./harness.ts"
import { DEV_UID, devUserTag, inContainer, OPS_UID, sandboxUid } from "./user-image.ts"

/**
 * `updateRemoteUserUID` and `containerUser` on a real engine: an image with
 * a non-root user `dev` (uid 1234, its own home, sudo), opened as VS Code
 * would open it. The sandbox runs as the workspace owner's uid either way;
 * the update makes that uid `dev`'s.
 */
const logLines = (id: SandboxId) =>
  SandboxService.use((sandboxes) => sandboxes.logs(id, { limit: 1000 })).pipe(
    Effect.map((events) => events.flatMap((event) => (event._tag === "Progress" ? [event.line] : [])))
  )

const devcontainer = (image: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    image,
    // What the sandbox user sees, written by its own lifecycle command.
    postCreateCommand: 'whoami > /tmp/whoami 2>&1; echo "$HOME" > /tmp/home; sudo -n id -u > /tmp/sudo 2>&1; true',
    ...extra
  })

describe("the remote user", () => {
  it("the uid update is the devcontainers CLI's own Dockerfile (the peer installed here), from its FROM on", () => {
    const cli = dirname(createRequire(import.meta.url).resolve("@devcontainers/cli/package.json"))
    const theirs = readFileSync(join(cli, "scripts", "updateUID.Dockerfile"), "utf8")
    const from = (text: string) => text.slice(text.indexOf("FROM $BASE_IMAGE"))
    assert.strictEqual(from(UPDATE_UID_DOCKERFILE), from(theirs))
  })

  it.live(
    "updateRemoteUserUID (the default): dev gets the workspace owner's uid, keeps its name, home and sudo",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const image = yield* devUserTag
          pushPullRequest(remote.path, 1, { ".devcontainer/devcontainer.json": devcontainer(image) })
          const row = yield* openRunning(remote.path, 1)
          assert.isNull(row.setupError)
          const id = row.containerId ?? assert.fail("no container")
          assert.match(row.environmentPlan?.image ?? "", /^prbox-uid\//)
          assert.isTrue(row.environmentPlan?.remoteUserMapped)
          assert.strictEqual(inContainer(id, "id -u dev"), String(sandboxUid))
          assert.strictEqual(inContainer(id, "cat /tmp/whoami"), "dev")
          assert.strictEqual(inContainer(id, "cat /tmp/home"), "/home/dev")
          assert.strictEqual(inContainer(id, "cat /tmp/sudo"), "0")
          // Its home is its own, and so is the workspace: one uid for both.
          assert.strictEqual(inContainer(id, "stat -c %u /home/dev"), String(sandboxUid))
          const folder = row.environmentPlan?.workspaceFolder ?? ""
          assert.strictEqual(inContainer(id, `stat -c %u ${folder}/.git`), String(sandboxUid))
          // An exec as the container's user (prbox exec, a terminal) is dev too.
          const user = inContainer(id, "stat -c %u:%g /proc/1")
          assert.strictEqual(inContainer(id, 'whoami; echo "$HOME"', user), "dev\n/home/dev")
          // The image's own uid image is made once and reused by the next sandbox.
          pushPullRequest(remote.path, 2, { ".devcontainer/devcontainer.json": devcontainer(image) })
          const again = yield* openRunning(remote.path, 2)
          assert.strictEqual(again.environmentPlan?.image, row.environmentPlan?.image)
        })
      ),
    240_000
  )

  it.live("containerUser alone names the remote user (not the image's USER), and it is mapped the same way", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        const image = yield* devUserTag
        pushPullRequest(remote.path, 3, {
          ".devcontainer/devcontainer.json": devcontainer(image, { containerUser: "ops" })
        })
        const row = yield* openRunning(remote.path, 3)
        const id = row.containerId ?? assert.fail("no container")
        assert.strictEqual(row.environmentPlan?.remoteUser, "ops")
        assert.strictEqual(inContainer(id, "cat /tmp/whoami"), "ops")
        assert.strictEqual(inContainer(id, "cat /tmp/home"), "/home/ops")
        assert.strictEqual(inContainer(id, "id -u ops"), String(sandboxUid))
        assert.strictEqual(inContainer(id, "id -u dev"), String(DEV_UID))
        assert.notStrictEqual(String(OPS_UID), String(sandboxUid))
      })
    )
  )

  it.live(
    "updateRemoteUserUID false: dev keeps uid 1234; the sandbox still runs as the workspace owner's uid, with prbox's home",
    () =>
      withEngine({}, ({ remote }) =>
        Effect.gen(function* () {
          const image = yield* devUserTag
          pushPullRequest(remote.path, 4, {
            ".devcontainer/devcontainer.json": devcontainer(image, { updateRemoteUserUID: false })
          })
          const row = yield* openRunning(remote.path, 4)
          const id = row.containerId ?? assert.fail("no container")
          assert.strictEqual(row.environmentPlan?.image, image)
          assert.isUndefined(row.environmentPlan?.remoteUserMapped)
          assert.strictEqual(inContainer(id, "id -u dev"), String(DEV_UID))
          assert.strictEqual(inContainer(id, "stat -c %u /proc/1"), String(sandboxUid))
          // The workspace stays the workspace owner's, as today; its uid has no name in the image.
          const folder = row.environmentPlan?.workspaceFolder ?? ""
          assert.strictEqual(inContainer(id, `stat -c %u ${folder}/.git`), String(sandboxUid))
          assert.match(inContainer(id, "cat /tmp/whoami"), /cannot find name for user ID/)
          assert.strictEqual(inContainer(id, "cat /tmp/home"), "/home/prbox")
          const lines = yield* logLines(row.id)
          assert.isTrue(
            lines.some((line) => line.includes("updateRemoteUserUID: false: dev keeps the image's uid")),
            "no warning said what false means"
          )
        })
      ),
    180_000
  )
})
