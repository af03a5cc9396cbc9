import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { openSettled, rowOf, withEngine } from "./harness.ts"

/**
 * A sandbox built from its PR's Dockerfile swaps its build context for a
 * link to a folder of this machine while `prbox rebuild` is under way: after
 * the rebuild read and checked devcontainer.json (in the container), when the
 * old container is being stopped (a latch on the runtime's stop, not a
 * race by time). The build that follows packs nothing of this machine.
 */
const base = DefaultImage.DEFAULT_IMAGE

/** When an image was made (ms since the epoch). */
const imageCreated = (id: string): number =>
  Date.parse(execFileSync("docker", ["image", "inspect", "-f", "{{.Created}}", id], { encoding: "utf8" }).trim())

const devcontainer = JSON.stringify({ build: { dockerfile: "ctx/Dockerfile", context: "ctx" } })
const dockerfile = `FROM ${base}\nCOPY . /ctx-copy/\n`

describe("a rebuild whose build context the sandbox swaps for a link", () => {
  it.live(
    "packs nothing through it: the rebuild ends in error naming the link, and no image holds the host's file",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          // What the link points at: a folder of this machine (another of the user's projects) with a secret in it.
          const secret = yield* Effect.acquireRelease(
            Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-secret-"))),
            (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
          )
          writeFileSync(join(secret, "secret.txt"), "host secret\n")
          writeFileSync(join(secret, "Dockerfile"), dockerfile)
          // Docker records an image's time in whole seconds at best: a second of slack.
          const began = Date.now() - 1000
          const swapped = yield* Ref.make(false)
          const folder = yield* Ref.make("/workspace")
          return yield* withEngine(
            {
              runtime: (real) => ({
                ...real,
                stop: (containerId) =>
                  Effect.gen(function* () {
                    if (!(yield* Ref.getAndSet(swapped, true))) {
                      const swap = yield* real.exec(
                        containerId,
                        ["sh", "-c", `rm -rf .devcontainer/ctx && ln -s ${secret} .devcontainer/ctx`],
                        { user: "1000:1000", cwd: yield* Ref.get(folder), timeoutMs: 20_000, maxOutputBytes: 4096 }
                      )
                      assert.strictEqual(swap.exitCode, 0, swap.stderr)
                    }
                    return yield* real.stop(containerId)
                  }).pipe(Effect.orDie)
              })
            },
            ({ remote }) =>
              Effect.gen(function* () {
                pushPullRequest(remote.path, 61, {
                  ".devcontainer/devcontainer.json": devcontainer,
                  ".devcontainer/ctx/Dockerfile": dockerfile,
                  ".devcontainer/ctx/hello.txt": "hello\n"
                })
                const row = yield* openSettled(remote.path, 61)
                assert.strictEqual(row.status, "running", row.error ?? "")
                yield* Ref.set(folder, row.environmentPlan?.workspaceFolder ?? "/workspace")
                const sandboxes = yield* SandboxService
                yield* sandboxes.rebuild(row.id)
                yield* sandboxes.awaitIdle(row.id)
                assert.isTrue(yield* Ref.get(swapped), "the latch never ran")
                const rebuilt = yield* rowOf(row.id)
                assert.strictEqual(rebuilt.status, "error")
                assert.include(rebuilt.error ?? "", "symbolic link")
                // No image built since the test began holds the host's file.
                const images = execFileSync("docker", ["images", "-q", "--filter", "reference=prbox-build/*"], {
                  encoding: "utf8"
                })
                  .split("\n")
                  .filter((id) => id !== "" && imageCreated(id) >= began)
                for (const image of images) {
                  const listed = execFileSync(
                    "docker",
                    [
                      "run",
                      "--rm",
                      "--label",
                      `${TEST_RUN_LABEL}=${inject("testRunId")}`,
                      "--entrypoint",
                      "sh",
                      image,
                      "-c",
                      "cat /ctx-copy/secret.txt 2>/dev/null || true"
                    ],
                    { encoding: "utf8" }
                  )
                  assert.notInclude(listed, "host secret")
                }
              })
          )
        })
      )
  )
})
