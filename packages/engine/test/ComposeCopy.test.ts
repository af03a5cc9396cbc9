import { createHash } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { DefaultImage } from "../src/node/index.ts"
import { containersOf, openRunning, withEngine } from "./harness.ts"
import { inContainer } from "./user-image.ts"

/**
 * What a Compose project reads from folders other than its file's, on the
 * real engine and docker-compose: an env_file in `config/`, and a binary
 * file of the repository bound into the app service, which must arrive
 * byte for byte (prbox copies it from the PR's commit in the mirror).
 */
describe("a Docker Compose devcontainer's files in other folders", () => {
  it.live("an env_file in config/ is read, and a bound binary file arrives whole (checksum in the container)", () =>
    withEngine({}, ({ remote }) =>
      Effect.gen(function* () {
        // Every byte value, and runs that are not UTF-8: a text copy would change them.
        const binary = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 131 + (i >> 9)) % 256)
        pushPullRequest(remote.path, 1, {
          ".devcontainer/devcontainer.json": JSON.stringify({
            dockerComposeFile: "docker-compose.yml",
            service: "app",
            workspaceFolder: "/workspaces/app"
          }),
          ".devcontainer/docker-compose.yml": [
            "services:",
            "  app:",
            `    image: ${DefaultImage.DEFAULT_IMAGE}`,
            "    command: sleep infinity",
            "    env_file: ../config/dev.env",
            "    volumes: ['../assets/blob.bin:/blob.bin:ro']",
            ""
          ].join("\n"),
          "config/dev.env": "FROM_ENV_FILE=config-dev\n",
          "assets/blob.bin": binary
        })
        const row = yield* openRunning(remote.path, 1)
        const app = row.containerId ?? assert.fail("no container")
        assert.strictEqual(inContainer(app, "printenv FROM_ENV_FILE"), "config-dev")
        const expected = createHash("sha256").update(binary).digest("hex")
        assert.strictEqual(inContainer(app, 'sha256sum /blob.bin | cut -d" " -f1'), expected)
        yield* (yield* SandboxService).delete(row.id)
        assert.deepStrictEqual(containersOf(row.id, { all: true }), [])
      })
    )
  )
})
