import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { sandboxIdentity } from "../src/create/GitIdentity.ts"
import type { PrboxConfig } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { openRunning, withEngine } from "./harness.ts"
import { HOST_TOKEN, hostGitConfig, shIn as run } from "./identity-fixtures.ts"

/** Opens PR 1 on an image with git, makes a commit in the sandbox: its author, and the sandbox user's whole git config. */
const commitInSandbox = (config: Partial<PrboxConfig>) =>
  withEngine({ config: { image: healthzGitImage(), ...config } }, ({ remote, home }) =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostGitConfig(home)
        const row = yield* openRunning(remote.path, 1)
        const author = yield* run(
          row.id,
          "echo fix > fix.txt && git add fix.txt && git commit -q -m fix && git log -1 --format='%an <%ae> %G?'"
        )
        const global = yield* run(row.id, "git config --global --list")
        const env = yield* run(row.id, "env")
        return { author, global, env }
      })
    )
  )

describe("the git identity inside a sandbox", () => {
  it("config.json's name and email win over the host's, each on its own", () => {
    const host = { name: "Host", email: "host@x" }
    const table: ReadonlyArray<[PrboxConfig["git"], { name: string | null; email: string | null }]> = [
      [{}, host],
      [{ name: "Me" }, { name: "Me", email: "host@x" }],
      [{ email: "me@y" }, { name: "Host", email: "me@y" }],
      [
        { name: "Me", email: "me@y" },
        { name: "Me", email: "me@y" }
      ]
    ]
    for (const [configured, expected] of table) assert.deepStrictEqual(sandboxIdentity(host, configured), expected)
    assert.deepStrictEqual(sandboxIdentity({ name: null, email: null }, {}), { name: null, email: null })
  })

  it.live("a commit in the sandbox carries the host's identity, unsigned; no credential reaches its git config", () =>
    Effect.gen(function* () {
      const { author, global, env } = yield* commitInSandbox({})
      // %G? is N: no signature.
      assert.strictEqual(author, "Host Person <host@prbox.invalid> N")
      assert.include(global, "commit.gpgsign=false")
      for (const secret of ["credential", "signingkey", HOST_TOKEN, "ABCDEF0123456789"]) {
        assert.notInclude(global.toLowerCase(), secret.toLowerCase())
        assert.notInclude(env, secret)
      }
      assert.notInclude(env, "GIT_CONFIG")
    })
  )

  it.live("the identity, written while code-server starts, is there for the setup's first step", () =>
    withEngine(
      { config: { image: healthzGitImage(), setupCommands: ["git config --global user.email > identity-at-setup"] } },
      ({ remote, home }) =>
        Effect.scoped(
          Effect.gen(function* () {
            yield* hostGitConfig(home)
            const row = yield* openRunning(remote.path, 1)
            assert.strictEqual(row.setupError, null)
            assert.strictEqual(yield* run(row.id, "cat identity-at-setup"), "host@prbox.invalid")
          })
        )
    )
  )

  it.live("config.json's git.name and git.email override the host's", () =>
    Effect.gen(function* () {
      const { author } = yield* commitInSandbox({ git: { name: "Configured", email: "configured@prbox.invalid" } })
      assert.strictEqual(author, "Configured <configured@prbox.invalid> N")
    })
  )
})
