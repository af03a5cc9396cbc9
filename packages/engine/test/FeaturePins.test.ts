import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent } from "@prbox/domain"
import { Effect } from "effect"
import { startRegistry } from "../../../scripts/testing/registry.ts"
import { publishFeature } from "../../../scripts/testing/registry-publish.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { PIN_MAX_AGE_MS, pinsToReuse } from "../src/features/FeaturePins.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { healthzTag, openSettled, withEngine } from "./harness.ts"

const digest = (n: number) => `sha256:${String(n).repeat(64)}`
const recorded = { requested: ["a", "b"], pins: { a: digest(1), b: digest(2) }, pinnedAt: 1_000 }

// recorded pins, the keys asked for now, the time → whether they are reused
const cases: ReadonlyArray<readonly [string, typeof recorded | undefined, ReadonlyArray<string>, number, boolean]> = [
  ["none recorded", undefined, ["a", "b"], 2_000, false],
  ["the same features (in any order), within the age", recorded, ["b", "a"], 2_000, true],
  ["one just before the age", recorded, ["a", "b"], 1_000 + PIN_MAX_AGE_MS - 1, true],
  ["at the age: refreshed", recorded, ["a", "b"], 1_000 + PIN_MAX_AGE_MS, false],
  ["a feature more: refreshed", recorded, ["a", "b", "c"], 2_000, false],
  ["a feature less: refreshed", recorded, ["a"], 2_000, false],
  ["a clock before the pin (set back): refreshed", recorded, ["a", "b"], 500, false]
]

describe("pinsToReuse", () => {
  for (const [name, pins, requested, now, reused] of cases) {
    it(name, () => assert.strictEqual(pinsToReuse(pins, requested, now) !== undefined, reused))
  }
})

describe("prbox's own feature pins", () => {
  it.live(
    "a later open of the same repository and features, without a lock file, installs the recorded digest although the tag moved",
    () =>
      Effect.gen(function* () {
        const registry = yield* startRegistry()
        const root = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-feature-pins-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const publish = (version: string) => {
          const folder = join(root, version, "moving")
          mkdirSync(folder, { recursive: true })
          writeFileSync(join(folder, "devcontainer-feature.json"), JSON.stringify({ id: "moving", version }))
          writeFileSync(join(folder, "install.sh"), `#!/bin/sh\necho ${version} > /etc/moving-feature\n`)
          return publishFeature(registry, { repository: "features/moving", tag: "1", folder })
        }
        const key = `${registry.host}/features/moving:1`
        const devcontainer = JSON.stringify({ image: DefaultImage.DEFAULT_IMAGE, features: { [key]: {} } })
        yield* withEngine({ config: { image: healthzTag, localRegistries: [registry.host] } }, ({ remote }) =>
          Effect.gen(function* () {
            const open = (pr: number) =>
              Effect.gen(function* () {
                pushPullRequest(remote.path, pr, { ".devcontainer/devcontainer.json": devcontainer })
                const row = yield* openSettled(remote.path, pr)
                assert.strictEqual(row.status, "running", row.error ?? "")
                const installed = execFileSync(
                  "docker",
                  ["exec", row.containerId ?? "", "cat", "/etc/moving-feature"],
                  {
                    encoding: "utf8"
                  }
                ).trim()
                const log = (yield* (yield* SandboxService).logs(row.id, { limit: 1000 })).map(describeEvent)
                return { row, installed, log }
              })
            const first = yield* publish("1.0.0")
            const before = yield* open(81)
            assert.strictEqual(before.installed, "1.0.0")
            assert.deepStrictEqual(before.row.environment?.features, [{ key, digest: first.manifestDigest }])

            // The tag moves on the registry: the same repository's next open keeps what it had.
            const moved = yield* publish("2.0.0")
            assert.notStrictEqual(moved.manifestDigest, first.manifestDigest)
            const after = yield* open(82)
            assert.strictEqual(after.installed, "1.0.0")
            assert.deepStrictEqual(after.row.environment?.features, [{ key, digest: first.manifestDigest }])
            assert.isTrue(
              after.log.some((line) => line.startsWith("features pinned by prbox since")),
              after.log.join("\n")
            )
            // Nothing of the pin is written into the workspace.
            const listed = execFileSync(
              "docker",
              ["exec", after.row.containerId ?? "", "sh", "-c", "ls -a .devcontainer"],
              {
                encoding: "utf8"
              }
            )
            assert.notInclude(listed, "lock")

            // A lock file in the PR governs instead: it pins the moved tag's digest, which is installed.
            pushPullRequest(remote.path, 83, {
              ".devcontainer/devcontainer.json": devcontainer,
              ".devcontainer/devcontainer-lock.json": JSON.stringify({
                features: { [key]: { integrity: moved.manifestDigest } }
              })
            })
            const locked = yield* openSettled(remote.path, 83)
            assert.strictEqual(locked.status, "running", locked.error ?? "")
            assert.deepStrictEqual(locked.environment?.features, [{ key, digest: moved.manifestDigest }])
          })
        )
      }).pipe(Effect.scoped),
    600_000
  )
})
