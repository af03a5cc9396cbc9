import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent, statePaths } from "@prbox/domain"
import { Effect, Stream } from "effect"
import { gitSync } from "../../git/test/helpers.ts"
import { SandboxService } from "../src/index.ts"
import { healthzGitImage } from "./git-image.ts"
import { bounded, filesContaining, inspectContainer, openRunning, rowOf, withEngine } from "./harness.ts"
import { shIn } from "./identity-fixtures.ts"
import { passwordOf } from "./probe.ts"

const CREDENTIAL_ENV = ["GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "GIT_CONFIG_GLOBAL"] as const

/**
 * Host credentials the way a developer has them: tokens in the environment
 * and a global git config with an auth header and a credential helper. All
 * restored when the test ends.
 */
const hostCredentials = (home: string, token: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = CREDENTIAL_ENV.map((name) => [name, process.env[name]] as const)
      const gitconfig = join(home, "host.gitconfig")
      writeFileSync(
        gitconfig,
        [
          "[user]",
          "\tname = Host Person",
          "\temail = host@prbox.invalid",
          "[http]",
          `\textraHeader = Authorization: Bearer ${token}`,
          "[credential]",
          `\thelper = "!f() { echo username=prbox; echo password=${token}; }; f"`,
          ""
        ].join("\n")
      )
      process.env.GITHUB_TOKEN = token
      process.env.GH_TOKEN = token
      process.env.GITLAB_TOKEN = token
      process.env.GIT_CONFIG_GLOBAL = gitconfig
      // The host's git does see it.
      const header = execFileSync("git", ["config", "--global", "--get", "http.extraHeader"], { encoding: "utf8" })
      assert.include(header, token)
      return saved
    }),
    (saved) =>
      Effect.sync(() => {
        for (const [name, value] of saved) {
          if (value === undefined) delete process.env[name]
          else process.env[name] = value
        }
      })
  )

/** Guarantee 8: the password reaches code-server through its environment only; host credentials stay on the host. */
describe("secrets", () => {
  it.live("the password is only in the container's environment; host credentials go nowhere", () => {
    const token = `ghp_prboxFake${randomBytes(16).toString("hex")}`
    // A setup command fails so the row carries a setup failure too.
    const config = { setupCommands: ["cat pr1.txt", "exit 3"], hooks: { onSandboxReady: ["true"] } }
    return withEngine({ config }, ({ remote, home }) =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostCredentials(home, token)
          const sandboxes = yield* SandboxService
          const events: Array<string> = []
          yield* Stream.runForEach(sandboxes.events, (event) =>
            Effect.sync(() => events.push(describeEvent(event)))
          ).pipe(Effect.forkScoped({ startImmediately: true }))

          const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
          yield* sandboxes.awaitIdle(opened.id).pipe(bounded("the create did not finish"))
          const row = yield* rowOf(opened.id)
          // A failed setup step is recorded on the row; the sandbox still runs.
          assert.strictEqual(row.status, "running", row.error ?? "")
          assert.strictEqual(row.setupError, "setup [2/2] failed with exit code 3")
          const password = passwordOf(row)
          assert.isAtLeast(password.length, 24)

          // The container: the password in its environment and nowhere else; no token at all.
          const info = inspectContainer(row.containerId ?? "")
          assert.include(info.Config.Env ?? [], `PASSWORD=${password}`)
          const { Env, ...config } = info.Config
          const everythingButEnv = JSON.stringify({ ...info, Config: config })
          const argv = JSON.stringify([info.Path, info.Args, config.Cmd, config.Entrypoint])
          assert.notInclude(argv, password)
          assert.notInclude(everythingButEnv, password)
          assert.notInclude(JSON.stringify(info), token)
          assert.isFalse(
            (Env ?? []).some((entry) => /TOKEN|GIT_CONFIG/.test(entry.split("=")[0] ?? "")),
            "host credentials reached the container's environment"
          )
          for (const bindings of Object.values(info.HostConfig.PortBindings)) {
            for (const binding of bindings) assert.strictEqual(binding.HostIp, "127.0.0.1")
          }

          for (const secret of [password, token]) {
            // The workspace (its .git included) and the sandbox's home directory.
            assert.isTrue(existsSync(join(row.workspacePath ?? "", ".git", "config")))
            assert.deepStrictEqual(filesContaining(row.workspacePath ?? "", secret), [])
            assert.deepStrictEqual(filesContaining(statePaths(home).sandbox(row.id).home, secret), [])
            // The row's errors and detail, the log, the events.
            assert.notInclude(`${row.error} ${row.setupError} ${row.detail}`, secret)
            const log = yield* sandboxes.logs(row.id, { limit: 10_000 })
            assert.isAbove(log.length, 5)
            assert.isFalse(
              log.some((entry) => describeEvent(entry).includes(secret)),
              "a log line holds a secret"
            )
            assert.isFalse(
              events.some((line) => line.includes(secret)),
              "an event holds a secret"
            )
          }
          // The subscription saw the whole create, from its first line to the failure.
          assert.isTrue(events[0]?.startsWith("opening "), events[0])
          assert.isTrue(events.some((line) => line.includes("failed with exit code 3")))
        })
      )
    )
  })

  it.live("git in the sandbox: the host's identity goes in, its credentials do not, before and after a push", () => {
    const token = `ghp_prboxFake${randomBytes(16).toString("hex")}`
    return withEngine({ config: { image: healthzGitImage() } }, ({ remote, home }) =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostCredentials(home, token)
          gitSync(home, `--git-dir=${remote.path}`, "update-ref", "refs/heads/feature", remote.pr1)
          const row = yield* openRunning(remote.path, 1)
          yield* shIn(row.id, "echo fix > fix.txt && git add fix.txt && git commit -q -m fix")
          const sandboxes = yield* SandboxService
          const pushed = yield* sandboxes.push(row.id, { confirm: true, to: "feature" })
          assert.isTrue(pushed.pushed)

          const config = yield* shIn(row.id, "git config --list --show-origin")
          assert.include(config, "user.name=Host Person")
          const env = yield* shIn(row.id, "env")
          const info = inspectContainer(row.containerId ?? "")
          for (const text of [config, env, JSON.stringify(info)]) {
            assert.notInclude(text, token)
            assert.notMatch(text, /credential|extraheader|GIT_CONFIG_GLOBAL/i)
          }
          assert.deepStrictEqual(filesContaining(statePaths(home).sandbox(row.id).home, token), [])
          assert.deepStrictEqual(filesContaining(row.workspacePath ?? "", token), [])
          assert.notInclude(JSON.stringify(pushed), token)
        })
      )
    )
  })
})
