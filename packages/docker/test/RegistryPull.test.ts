import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { startRegistry, type TestRegistry, testAuth } from "../../../scripts/testing/registry.ts"
import { pushImage } from "../../../scripts/testing/registry-publish.ts"
import { Docker, NodeDocker, type PullAuth } from "../src/index.ts"
import { healthzTag } from "./fixtures.ts"

// Pulls through the real engine from a real registry process on 127.0.0.1
// (scripts/testing/registry.ts), anonymous and behind htpasswd.

/** The healthz image pushed to `registry` under a name of its own; removed from the engine after the test. */
const published = (registry: TestRegistry) =>
  Effect.acquireRelease(pushImage(registry, healthzTag, "prbox-test/pull", randomBytes(4).toString("hex")), (ref) =>
    Effect.sync(() => execFileSync("docker", ["rmi", "--force", ref], { stdio: "ignore" }))
  )

const pull = (ref: string, auth?: PullAuth) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    const lines: Array<string> = []
    const result = yield* Effect.result(docker.pullImage(ref, (line) => lines.push(line), auth))
    return { result, lines, present: yield* docker.imageExists(ref) }
  }).pipe(Effect.provide(NodeDocker.layer()))

describe("pulls from a registry", () => {
  it.live("anonymous: the image comes, with the engine's progress", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const ref = yield* published(registry)
      const { result, lines, present } = yield* pull(ref)
      assert.strictEqual(result._tag, "Success", String(lines))
      assert.isTrue(present)
      assert.isTrue(
        lines.some((line) => line.startsWith("Digest: sha256:")),
        lines.join(" | ")
      )
    }).pipe(Effect.scoped)
  )

  it.live("behind htpasswd: only the login makes it; no failure shows the password", () =>
    Effect.gen(function* () {
      const auth = testAuth()
      const registry = yield* startRegistry({ auth })
      const ref = yield* published(registry)
      const login = (password: string): PullAuth => ({
        serverAddress: registry.host,
        username: auth.user,
        password: Redacted.make(password)
      })

      const anonymous = yield* pull(ref)
      assert.strictEqual(anonymous.result._tag, "Failure")
      assert.isFalse(anonymous.present)
      const wrongPassword = `${auth.password}-wrong`
      const wrong = yield* pull(ref, login(wrongPassword))
      assert.strictEqual(wrong.result._tag, "Failure")
      assert.isFalse(wrong.present)
      for (const { result, lines } of [anonymous, wrong]) {
        if (result._tag !== "Failure") continue
        assert.strictEqual(result.failure._tag, "ImagePullFailed")
        const shown = `${JSON.stringify(result.failure)} ${result.failure.message} ${lines.join("\n")}`
        assert.notInclude(shown, auth.password)
      }

      const { result, lines, present } = yield* pull(ref, login(auth.password))
      assert.strictEqual(result._tag, "Success", String(lines))
      assert.isTrue(present)
      assert.notInclude(lines.join("\n"), auth.password)
    }).pipe(Effect.scoped)
  )
})
