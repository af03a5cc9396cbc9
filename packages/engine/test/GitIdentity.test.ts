import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { sandboxIdentity } from "../src/create/GitIdentity.ts"
import { type PrboxConfig, SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { openRunning, withEngine } from "./harness.ts"

const HOST_TOKEN = "ghp_prboxIdentityFake0123456789"

/**
 * The host's global git config the way a developer has it: an identity, a
 * credential helper with a token, a signing key. GIT_CONFIG_GLOBAL points
 * at it while the test runs, then is restored.
 */
export const hostGitConfig = (home: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = process.env.GIT_CONFIG_GLOBAL
      const file = join(home, "identity.gitconfig")
      writeFileSync(
        file,
        [
          "[user]",
          "\tname = Host Person",
          "\temail = host@prbox.invalid",
          "\tsigningkey = ABCDEF0123456789",
          "[commit]",
          "\tgpgsign = true",
          "[credential]",
          `\thelper = "!f() { echo password=${HOST_TOKEN}; }; f"`,
          ""
        ].join("\n")
      )
      process.env.GIT_CONFIG_GLOBAL = file
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL
        else process.env.GIT_CONFIG_GLOBAL = saved
      })
  )

const run = (id: Parameters<SandboxService["Service"]["exec"]>[0], script: string) =>
  Effect.flatMap(SandboxService, (sandboxes) =>
    sandboxes.exec(id, ["sh", "-c", script], { timeoutMs: 20_000, maxOutputBytes: 64 * 1024 })
  ).pipe(
    Effect.tap((outcome) => Effect.sync(() => assert.strictEqual(outcome.exitCode, 0, outcome.stderr))),
    Effect.map((outcome) => outcome.stdout.trim())
  )

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

  it.live("config.json's git.name and git.email override the host's", () =>
    Effect.gen(function* () {
      const { author } = yield* commitInSandbox({ git: { name: "Configured", email: "configured@prbox.invalid" } })
      assert.strictEqual(author, "Configured <configured@prbox.invalid> N")
    })
  )
})
