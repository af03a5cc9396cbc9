import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { NodeDocker } from "@prbox/docker"
import { Effect } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { NodePlatform, probeLocation } from "../src/node/index.ts"
import { healthzTag } from "./harness.ts"

const probe = (images: ReadonlyArray<string>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => realpathSync(mkdtempSync(join(tmpdir(), "prbox-probe-")))),
    (home) =>
      probeLocation({ home, images, labels: { [TEST_RUN_LABEL]: inject("testRunId") } }).pipe(
        Effect.provide(NodeDocker.layer()),
        Effect.provide(NodePlatform.layer)
      ),
    (home) => Effect.sync(() => rmSync(home, { recursive: true, force: true }))
  )

describe("the bind-mount probe", () => {
  it.live("the local engine sees this machine's folder: local", () =>
    Effect.gen(function* () {
      const found = yield* probe(["prbox-test/absent:never", healthzTag])
      assert.strictEqual(found.location, "local", found.detail)
    })
  )

  it.live("no image to probe with: unknown, naming the images it looked for", () =>
    Effect.gen(function* () {
      const found = yield* probe(["prbox-test/absent:never"])
      assert.deepStrictEqual(found, {
        location: "unknown",
        detail: "no image to probe with: none of prbox-test/absent:never is on the engine"
      })
    })
  )
})
