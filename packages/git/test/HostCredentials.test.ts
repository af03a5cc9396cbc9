import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, writeFileSync } from "node:fs"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { authorization, type HostCredential, namedHost, secretsOf } from "../src/HostCredentials.ts"
import { hostCredential, parseCredential } from "../src/index.ts"
import { safeText } from "../src/PullAnswers.ts"
import { hostEnvironment } from "./hostingApi.ts"

const ask = (provider: "github" | "gitlab" | "bitbucket", host: string, timeoutMs = 10_000) =>
  hostCredential(provider, host, { timeoutMs }).pipe(Effect.provide(NodeServices.layer))

describe("host credentials", () => {
  it("a service echoing the Authorization header shows no secret, a Basic one's encoding included", () => {
    const credentials: ReadonlyArray<HostCredential> = [
      { _tag: "Token", token: "ghp_echoed" },
      { _tag: "Basic", username: "emma@example.com", password: "ATATTechoed" }
    ]
    for (const credential of credentials) {
      const header = authorization(credential)
      const shown = safeText(`Server Error (asked with ${header})`, secretsOf(credential))
      assert.notInclude(shown, header.split(" ")[1] ?? "")
      assert.notInclude(shown, credential._tag === "Token" ? credential.token : credential.password)
    }
  })

  it.live("the host's variables come first, each host its own", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment(
          {
            GH_TOKEN: "gh-env",
            GITHUB_TOKEN: "github-env",
            GITHUB_ENTERPRISE_TOKEN: "ghe-env",
            GH_HOST: "git.example.com",
            GITLAB_TOKEN: "gl-env",
            GITLAB_HOST: "https://gitlab.example.com",
            BITBUCKET_EMAIL: "emma@example.com",
            BITBUCKET_API_TOKEN: "bb-api",
            BITBUCKET_TOKEN: "bb-access"
          },
          "echo username=u; echo password=from-helper"
        )
        assert.deepStrictEqual(yield* ask("github", "github.com"), { _tag: "Token", token: "gh-env" })
        assert.deepStrictEqual(yield* ask("github", "git.example.com"), { _tag: "Token", token: "ghe-env" })
        assert.deepStrictEqual(yield* ask("gitlab", "gitlab.example.com"), { _tag: "Token", token: "gl-env" })
        assert.deepStrictEqual(yield* ask("bitbucket", "bitbucket.org"), {
          _tag: "Basic",
          username: "emma@example.com",
          password: "bb-api"
        })
        delete process.env.BITBUCKET_API_TOKEN
        assert.deepStrictEqual(yield* ask("bitbucket", "bitbucket.org"), { _tag: "Token", token: "bb-access" })
        delete process.env.GH_TOKEN
        assert.deepStrictEqual(yield* ask("github", "github.com"), { _tag: "Token", token: "github-env" })
        delete process.env.GITHUB_TOKEN
        assert.deepStrictEqual(yield* ask("github", "github.com"), { _tag: "Token", token: "from-helper" })
      })
    )
  )

  it.live("a host a link names gets no variable's token, only what the helpers hold for it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const fromHelper = { _tag: "Token", token: "from-helper" } as const
        yield* hostEnvironment(
          {
            GH_TOKEN: "gh-env",
            GH_ENTERPRISE_TOKEN: "ghe-env",
            GH_HOST: "git.example.com",
            GITLAB_TOKEN: "gl-env",
            GITLAB_HOST: "gitlab.example.com",
            BITBUCKET_EMAIL: "emma@example.com",
            BITBUCKET_API_TOKEN: "bb-api",
            BITBUCKET_TOKEN: "bb-access"
          },
          "echo username=u; echo password=from-helper"
        )
        for (const provider of ["github", "gitlab", "bitbucket"] as const) {
          for (const host of ["evil.example", "git.example.com.evil.example", "github.com:8443"]) {
            const got = yield* ask(provider, host)
            assert.deepStrictEqual(
              got?._tag === "Basic" ? got.password : got,
              provider === "bitbucket" ? "from-helper" : fromHelper,
              `${provider} at ${host}`
            )
          }
        }
        // GITLAB_HOST names this machine's GitLab: gitlab.com's is then the helpers' too.
        assert.deepStrictEqual(yield* ask("gitlab", "gitlab.com"), fromHelper)
        assert.deepStrictEqual(yield* ask("gitlab", "gitlab.example.com"), { _tag: "Token", token: "gl-env" })
      })
    )
  )

  it("a host variable is a name, name:port or URL, as prbox spells a host", () => {
    const table: ReadonlyArray<[string | undefined, string | undefined]> = [
      [undefined, undefined],
      ["", undefined],
      ["  ", undefined],
      ["git.example.com", "git.example.com"],
      ["Git.Example.COM:8443", "git.example.com:8443"],
      ["https://www.gitlab.example.com/", "gitlab.example.com"],
      ["https://gitlab.example.com/api/v4", "gitlab.example.com"]
    ]
    for (const [value, host] of table) assert.strictEqual(namedHost(value), host, String(value))
  })

  it.live("git credential fill never prompts: no askpass program runs, and no helper means none", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const home = yield* hostEnvironment({})
        const askpass = NodePath.join(home, "askpass")
        writeFileSync(askpass, `#!/bin/sh\ntouch "${home}/asked"\necho typed-secret\n`)
        chmodSync(askpass, 0o755)
        writeFileSync(NodePath.join(home, ".gitconfig"), `[core]\n\taskPass = ${askpass}\n`)
        process.env.GIT_ASKPASS = askpass
        process.env.SSH_ASKPASS = askpass
        assert.isUndefined(yield* ask("github", "github.com"))
        assert.isFalse(existsSync(NodePath.join(home, "asked")), "an askpass program was run")
      })
    )
  )

  it.live("a helper that never answers is given up after the bound", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const home = yield* hostEnvironment({})
        // Opening a FIFO nobody writes blocks for ever: the helper never answers.
        execFileSync("mkfifo", [NodePath.join(home, "never")])
        const helper = NodePath.join(home, "helper")
        writeFileSync(helper, `#!/bin/sh\ncat "${home}/never"\n`)
        chmodSync(helper, 0o755)
        writeFileSync(NodePath.join(home, ".gitconfig"), `[credential]\n\thelper = ${helper}\n`)
        assert.isUndefined(yield* ask("gitlab", "gitlab.example.com", 300))
      })
    )
  )

  it("git's answer: its user name and password, nothing without a password", () => {
    assert.deepStrictEqual(parseCredential("protocol=https\nhost=github.com\nusername=u\npassword=tok=with=equals\n"), {
      username: "u",
      password: "tok=with=equals"
    })
    assert.deepStrictEqual(parseCredential("password=p\n"), { username: "", password: "p" })
    assert.isUndefined(parseCredential("protocol=https\nhost=github.com\n"))
    assert.isUndefined(parseCredential("username=u\npassword=\n"))
  })
})
