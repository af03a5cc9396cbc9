import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { describeEvent } from "@prbox/domain"
import { Effect } from "effect"
import { startRegistry, type TestRegistry, testAuth } from "../../../scripts/testing/registry.ts"
import { pushImage } from "../../../scripts/testing/registry-publish.ts"
import { SandboxService } from "../src/index.ts"
import { dockerConfig } from "./docker-config.ts"
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
