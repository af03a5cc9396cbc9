import { assert, describe, it } from "@effect/vitest"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { parseHostIdentity, sandboxIdentity } from "../src/create/GitIdentity.ts"
import type { PrboxConfig } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { logLines, openRunning, withEngine } from "./harness.ts"
import { HOST_TOKEN, hostGitConfig, shIn as run } from "./identity-fixtures.ts"
import { prebuiltBase, removePrebuildsOf } from "./prebuild-support.ts"

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

  it("the host's identity from one `git config -z --get-regexp`: the last of a key wins, keys in any case, blank values none", () => {
    const table: ReadonlyArray<[string, { name: string | null; email: string | null }]> = [
      ["", { name: null, email: null }],
      ["user.name\nHost Person\0user.email\nhost@x\0", { name: "Host Person", email: "host@x" }],
      ["user.name\nFirst\0user.name\nLast\0", { name: "Last", email: null }],
      ["User.Email\nmixed@x\0", { name: null, email: "mixed@x" }],
      ["user.name\n  \0user.email\0", { name: null, email: null }],
      ["user.name\nline one\nline two\0", { name: "line one\nline two", email: null }]
    ]
    for (const [answer, expected] of table) assert.deepStrictEqual(parseHostIdentity(answer), expected, answer)
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

  it.live(
    "a devcontainer.json's steps: the identity, written in the checkout's exec, is there for onCreateCommand",
    () =>
      withEngine({}, ({ remote, home }) =>
        Effect.scoped(
          Effect.gen(function* () {
            yield* hostGitConfig(home)
            pushPullRequest(remote.path, 2, {
              ".devcontainer/devcontainer.json": JSON.stringify({
                image: healthzGitImage(),
                onCreateCommand: "git config --global user.name > identity-at-setup",
                userEnvProbe: "loginShell"
              })
            })
            const row = yield* openRunning(remote.path, 2)
            assert.strictEqual(row.setupError, null)
            assert.strictEqual(yield* run(row.id, "cat identity-at-setup"), "Host Person")
            assert.include(yield* run(row.id, "git config --global --list"), "commit.gpgsign=false")
          })
        )
      )
  )

  it.live(
    "a PR opened from a prebuild gets the host's identity, written in the probe's exec before updateContentCommand",
    () =>
      withEngine({ config: { prebuilds: { maxGiB: 10, keepDays: 7 } } }, ({ remote, home }) =>
        Effect.gen(function* () {
          const devcontainer = JSON.stringify({
            image: healthzGitImage(),
            onCreateCommand: "true",
            updateContentCommand: "git config --global user.name > identity-at-update || true"
          })
          // A prebuild is no user's: its container gets no identity.
          yield* prebuiltBase(remote.path, devcontainer)
          const [made] = yield* (yield* PrebuildRepo).list
          assert.strictEqual(made?.state, "ready", made?.error ?? "no prebuild")
          const row = yield* Effect.scoped(
            Effect.andThen(
              hostGitConfig(home),
              Effect.suspend(() => {
                pushPullRequest(remote.path, 1, { "one.txt": "1" })
                return openRunning(remote.path, 1)
              })
            )
          )
          assert.include((yield* logLines(row.id)).join("\n"), "from prebuild")
          assert.strictEqual(row.setupError, null)
          assert.strictEqual(yield* run(row.id, "cat identity-at-update"), "Host Person")
        }).pipe(Effect.ensuring(removePrebuildsOf(home)))
      ),
    120_000
  )

  it.live("config.json's git.name and git.email override the host's", () =>
    Effect.gen(function* () {
      const { author } = yield* commitInSandbox({ git: { name: "Configured", email: "configured@prbox.invalid" } })
      assert.strictEqual(author, "Configured <configured@prbox.invalid> N")
    })
  )
})
