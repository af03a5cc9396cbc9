import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { LOCAL_ENGINE } from "@prbox/domain"
import { Effect, Layer } from "effect"
import { ComposeCli } from "../src/ComposeCli.ts"
import * as NodeComposeCli from "../src/node/NodeComposeCli.ts"
import * as NodePlatform from "../src/node/NodePlatform.ts"

/** The user's Compose as prbox runs it: Debian's docker-compose here, for real. */
const dir = mkdtempSync(join(tmpdir(), "prbox-compose-cli-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const cli = (address: string) => Layer.provide(NodeComposeCli.layer(address), NodePlatform.layer)

const file = join(dir, "docker-compose.yml")
writeFileSync(
  file,
  [
    "services:",
    "  app:",
    "    image: debian",
    "    environment:",
    "      FROM_HOST: ${PRBOX_TEST_HOST_SECRET:-unset}",
    "      FROM_ENV_FILE: ${FROM_DOTENV:-unset}",
    ""
  ].join("\n")
)
writeFileSync(join(dir, ".env"), "FROM_DOTENV=from-the-project\n")

describe("ComposeCli (docker-compose on the local engine)", () => {
  it.live("a host variable the Compose file names is never interpolated; the project's .env is", () =>
    Effect.gen(function* () {
      process.env.PRBOX_TEST_HOST_SECRET = "host-secret-value"
      const compose = yield* ComposeCli
      const rendered = yield* compose.render({ name: "prbox-cli-test", directory: dir }, [file])
      assert.notInclude(rendered, "host-secret-value")
      assert.match(rendered, /FROM_HOST: unset/)
      assert.match(rendered, /FROM_ENV_FILE: from-the-project/)
    }).pipe(
      Effect.ensuring(Effect.sync(() => delete process.env.PRBOX_TEST_HOST_SECRET)),
      Effect.provide(
        // The layer reads the daemon's environment when it is built: the variable is there by then.
        Layer.unwrap(
          Effect.sync(() => {
            process.env.PRBOX_TEST_HOST_SECRET = "host-secret-value"
            return cli(LOCAL_ENGINE)
          })
        )
      )
    )
  )

  it("the scrubbed environment: PATH, HOME, the engine's address and its TLS settings, nothing else", () => {
    const env = NodeComposeCli.scrubbedEnvironment(
      {
        PATH: "/bin",
        HOME: "/h",
        SECRET: "s",
        DOCKER_HOST: "tcp://elsewhere",
        DOCKER_TLS_VERIFY: "1",
        AWS_SECRET: "a"
      },
      LOCAL_ENGINE
    )
    assert.deepStrictEqual(env, { PATH: "/bin", HOME: "/h", DOCKER_HOST: LOCAL_ENGINE, DOCKER_TLS_VERIFY: "1" })
  })

  it.live("which Compose runs here: docker-compose when there is no plugin", () =>
    Effect.gen(function* () {
      assert.match(yield* (yield* ComposeCli).version, /^(docker compose|docker-compose) \d/)
    }).pipe(Effect.provide(cli(LOCAL_ENGINE)))
  )

  it.live("a remote engine is refused, saying so", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip((yield* ComposeCli).render({ name: "p", directory: dir }, [file]))
      assert.include(error.message, "this machine's Docker engine only")
      assert.notInclude(error.message, "secret")
    }).pipe(Effect.provide(cli("ssh://user:secret@remote.example")))
  )

  it.live("neither Compose on PATH: the error names both", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip((yield* ComposeCli).version)
      assert.include(error.message, "docker compose")
      assert.include(error.message, "docker-compose")
    }).pipe(
      Effect.provide(
        Layer.unwrap(
          Effect.acquireRelease(
            Effect.sync(() => {
              const path = process.env.PATH
              process.env.PATH = dir
              return path
            }),
            (path) => Effect.sync(() => (process.env.PATH = path))
          ).pipe(Effect.as(cli(LOCAL_ENGINE)))
        )
      )
    )
  )
})
