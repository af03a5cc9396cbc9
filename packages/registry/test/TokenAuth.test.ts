import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startRegistry } from "../../../scripts/testing/registry.ts"
import type { TokenServerOptions } from "../../../scripts/testing/registry-token.ts"
import { identityTokenCredentials, passwordCredentials } from "../src/index.ts"
import { failureOf, fetchFeature, publishHello, reference } from "./fixtures.ts"

// A real registry process behind token auth: its Bearer challenge sends
// clients to a token server on 127.0.0.1 (scripts/testing/registry-token.ts)
// whose signed tokens the registry verifies.

const tokenOptions = (anonymousPull: boolean): TokenServerOptions => ({
  user: "prbox-test",
  password: randomBytes(12).toString("hex"),
  identityToken: randomBytes(16).toString("hex"),
  anonymousPull
})

describe("fetchArtifact behind token auth", () => {
  it.live("a public repository: an anonymous token, no credentials sent anywhere", () =>
    Effect.gen(function* () {
      const options = tokenOptions(true)
      const registry = yield* startRegistry({ token: options })
      const published = yield* publishHello(registry)
      const before = registry.token?.seen.length ?? 0
      const artifact = yield* fetchFeature(reference(`${registry.host}/features/hello:1`))
      assert.strictEqual(artifact.layerDigest, published.layerDigest)
      const asked = registry.token?.seen.slice(before) ?? []
      assert.isAbove(asked.length, 0, "the token server was asked")
      assert.isTrue(asked.every((headers) => headers.authorization === undefined))
    }).pipe(Effect.scoped)
  )

  it.live("a private repository: the user's password or identity token buys the token; nothing else does", () =>
    Effect.gen(function* () {
      const options = tokenOptions(false)
      const registry = yield* startRegistry({ token: options })
      const published = yield* publishHello(registry)
      const ref = reference(`${registry.host}/features/hello:1`)

      const withPassword = yield* fetchFeature(ref, {
        credentials: passwordCredentials(options.user, options.password)
      })
      assert.strictEqual(withPassword.layerDigest, published.layerDigest)
      const withToken = yield* fetchFeature(ref, { credentials: identityTokenCredentials(options.identityToken) })
      assert.strictEqual(withToken.layerDigest, published.layerDigest)

      const anonymous = yield* failureOf(fetchFeature(ref))
      assert.strictEqual(anonymous.reason, "unauthorized")
      assert.include(anonymous.detail, "registryCredentials")
      const wrong = yield* failureOf(fetchFeature(ref, { credentials: passwordCredentials(options.user, "not-it") }))
      assert.strictEqual(wrong.reason, "unauthorized")
      assert.include(wrong.detail, "refused the credentials")
      const wrongToken = yield* failureOf(fetchFeature(ref, { credentials: identityTokenCredentials("not-it") }))
      assert.strictEqual(wrongToken.reason, "unauthorized")
      for (const error of [anonymous, wrong, wrongToken]) {
        assert.notInclude(JSON.stringify(error), options.password)
        assert.notInclude(JSON.stringify(error), options.identityToken)
      }
    }).pipe(Effect.scoped)
  )
})
