import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent } from "@prbox/domain"
import { Effect } from "effect"
import { type RegistryAuth, startRegistry, type TestRegistry, testAuth } from "../../../scripts/testing/registry.ts"
import { pushImage } from "../../../scripts/testing/registry-publish.ts"
import { SandboxService } from "../src/index.ts"
import { filesContaining, healthzTag, inspectContainer, openSettled, withEngine } from "./harness.ts"

// Opens whose image comes from a real registry process on 127.0.0.1
// (scripts/testing/registry.ts) through the real engine: anonymous, and
// behind htpasswd with the user's Docker credentials (a temp DOCKER_CONFIG
// whose credential helper is a script on PATH that records each lookup).

/** The healthz image pushed as `<registry>/prbox-test/engine-pull:<random>`; removed from the engine afterwards. */
const published = (registry: TestRegistry) =>
  Effect.acquireRelease(
    pushImage(registry, healthzTag, "prbox-test/engine-pull", randomBytes(4).toString("hex")),
    (ref) => Effect.sync(() => execFileSync("docker", ["rmi", "--force", ref], { stdio: "ignore" }))
  )

/** Sets environment variables for the scope (the daemon reads DOCKER_CONFIG and PATH from its own). */
const environment = (values: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const before = Object.fromEntries(Object.keys(values).map((key) => [key, process.env[key]]))
      Object.assign(process.env, values)
      return before
    }),
    (before) =>
      Effect.sync(() => {
        for (const [key, value] of Object.entries(before)) {
          if (value === undefined) delete process.env[key]
          else process.env[key] = value
        }
      })
  )

interface DockerConfig {
  readonly dir: string
  /** The registries the credential helper was asked for, in order. */
  readonly asked: () => Array<string>
}

/**
 * A DOCKER_CONFIG whose `credHelpers` sends `registry` to a helper script
 * answering with `auth` (the way `docker login` with a helper leaves it).
 */
const dockerConfig = (registry: string, auth: RegistryAuth) =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-docker-config-"))),
      (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
    )
    const bin = join(dir, "bin")
    mkdirSync(bin)
    const log = join(dir, "asked")
    const helper = join(bin, "docker-credential-prbox-test")
    const answer = JSON.stringify({ ServerURL: registry, Username: auth.user, Secret: auth.password })
    writeFileSync(helper, `#!/bin/sh\nread -r registry\necho "$registry" >> ${log}\necho '${answer}'\n`)
    chmodSync(helper, 0o755)
    writeFileSync(join(dir, "config.json"), JSON.stringify({ credHelpers: { [registry]: "prbox-test" } }))
    yield* environment({ DOCKER_CONFIG: dir, PATH: `${bin}:${process.env.PATH ?? ""}` })
    const asked = () => {
      try {
        return readFileSync(log, "utf8").split("\n").filter(Boolean)
      } catch {
        return []
      }
    }
    return { dir, asked } satisfies DockerConfig
  })

/** Opens PR 1 and waits: the settled row and its log lines. */
const open = (input: string) =>
  Effect.gen(function* () {
    const row = yield* openSettled(input, 1)
    const log = yield* (yield* SandboxService).logs(row.id, { limit: 500 })
    return { row, lines: log.map(describeEvent) }
  })

describe("images from a registry", () => {
  it.live("anonymous: pulled with its progress in the sandbox's log", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const image = yield* published(registry)
      const { row, lines } = yield* withEngine({ config: { image } }, ({ remote }) => open(remote.path))
      assert.strictEqual(row.status, "running", row.error ?? "")
      assert.include(lines, `pulling ${image}`)
      assert.isTrue(
        lines.some((line) => line.startsWith("Digest: sha256:")),
        lines.join(" | ")
      )
    }).pipe(Effect.scoped)
  )

  it.live(
    "behind auth, listed in registryCredentials: pulled with the user's login, which the sandbox never sees",
    () =>
      Effect.gen(function* () {
        const auth = testAuth()
        const registry = yield* startRegistry({ auth })
        const image = yield* published(registry)
        const config = yield* dockerConfig(registry.host, auth)
        const basic = Buffer.from(`${auth.user}:${auth.password}`).toString("base64")
        yield* withEngine({ config: { image, registryCredentials: [registry.host] } }, ({ remote, home }) =>
          Effect.gen(function* () {
            const { row, lines } = yield* open(remote.path)
            assert.strictEqual(row.status, "running", row.error ?? "")
            assert.include(lines, `pulling ${image}`)
            assert.deepStrictEqual(config.asked(), [registry.host])
            // Nowhere prbox writes or the container shows: its inspect (env, labels, command), the log, the home.
            const inspected = JSON.stringify(inspectContainer(row.containerId ?? ""))
            const imageInspected = execFileSync("docker", ["image", "inspect", image], { encoding: "utf8" })
            for (const secret of [auth.password, basic]) {
              assert.notInclude(inspected, secret)
              assert.notInclude(imageInspected, secret)
              assert.notInclude(lines.join("\n"), secret)
              assert.deepStrictEqual(filesContaining(home, secret), [])
            }
            const env = execFileSync("docker", ["exec", row.containerId ?? "", "env"], { encoding: "utf8" })
            assert.notInclude(env, auth.password)
          })
        )
      }).pipe(Effect.scoped)
  )

  it.live("behind auth, not listed: asked anonymously (the user's helper never runs) and refused with the hint", () =>
    Effect.gen(function* () {
      const auth = testAuth()
      const registry = yield* startRegistry({ auth })
      const image = yield* published(registry)
      const config = yield* dockerConfig(registry.host, auth)
      const { row } = yield* withEngine({ config: { image, registryCredentials: ["localhost:1"] } }, ({ remote }) =>
        open(remote.path)
      )
      assert.strictEqual(row.status, "error")
      assert.include(row.error ?? "", `add "${registry.host}" to registryCredentials`)
      assert.notInclude(row.error ?? "", auth.password)
      assert.isNull(row.containerId)
      assert.deepStrictEqual(config.asked(), [])
    }).pipe(Effect.scoped)
  )
})
