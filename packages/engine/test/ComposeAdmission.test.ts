import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { containersOf, withEngine } from "./harness.ts"

/**
 * A Compose devcontainer that cannot run here is refused when `open` is
 * asked, as a bad devcontainer.json is: no row, no container. The daemon's
 * Compose is found on the PATH it starts with (NodeComposeCli): here an
 * empty folder, so neither `docker compose` nor `docker-compose` runs. The
 * PATH is the test's own again once the engine is built.
 */
describe("a Docker Compose devcontainer refused at admission", () => {
  it.live("without Docker Compose on this machine: a clear error naming both, no row, no container", () => {
    const path = process.env.PATH
    return withEngine(
      {
        seed: (home) => {
          const empty = join(home, "no-compose")
          mkdirSync(empty)
          process.env.PATH = empty
        }
      },
      ({ remote }) =>
        Effect.gen(function* () {
          process.env.PATH = path
          pushPullRequest(remote.path, 1, {
            ".devcontainer/devcontainer.json": JSON.stringify({
              dockerComposeFile: "docker-compose.yml",
              service: "app"
            }),
            ".devcontainer/docker-compose.yml": `services:\n  app:\n    image: ${DefaultImage.DEFAULT_IMAGE}\n`
          })
          const sandboxes = yield* SandboxService
          const refused = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 1 }))
          assert.strictEqual(refused._tag, "InvalidDevcontainer")
          assert.include(refused.message, ".devcontainer/devcontainer.json: dockerComposeFile:")
          assert.include(refused.message, "neither `docker compose` (the Compose plugin) nor `docker-compose`")
          assert.deepStrictEqual(yield* sandboxes.listAll, [])
          // A devcontainer.json that needs no Compose still opens on the same engine.
          pushPullRequest(remote.path, 2, {
            ".devcontainer/devcontainer.json": JSON.stringify({ image: DefaultImage.DEFAULT_IMAGE })
          })
          const other = yield* sandboxes.open({ input: remote.path, pr: 2 })
          assert.lengthOf(yield* sandboxes.listAll, 1)
          yield* sandboxes.awaitIdle(other.id)
          yield* sandboxes.delete(other.id)
          assert.deepStrictEqual(containersOf(other.id, { all: true }), [])
        }).pipe(Effect.ensuring(Effect.sync(() => (process.env.PATH = path))))
    )
  })
})
