import { assert, describe, it } from "@effect/vitest"
import { passwordCredentials } from "@prbox/registry"
import { accessHint, isListed, type RegistryAccess, refusedForCredentials } from "../src/index.ts"

describe("isListed", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, boolean]> = [
    ["localhost:5000", ["localhost:5000"], true],
    ["Registry.Example", ["registry.example"], true],
    ["registry.example", ["Registry.Example:443"], false],
    ["localhost:5001", ["localhost:5000"], false],
    ["localhost", ["localhost:5000"], false],
    ["registry.example", [], false]
  ]
  for (const [registry, listed, expected] of cases) {
    it(`${registry} in ${JSON.stringify(listed)}: ${expected}`, () =>
      assert.strictEqual(isListed(registry, listed), expected))
  }
})

describe("refusedForCredentials", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ['Head "http://localhost:5000/v2/x/manifests/1": no basic auth credentials', true],
    ["unauthorized: authentication required", true],
    ["pull access denied for x, repository does not exist or may require 'docker login'", true],
    ["the registry needs credentials (401)", true],
    ["(403) forbidden", true],
    ["manifest for localhost:5000/x:1 not found: manifest unknown", false],
    ["dial tcp 127.0.0.1:5000: connect: connection refused", false],
    ["image size 4010 bytes", false]
  ]
  for (const [detail, expected] of cases) {
    it(`${detail}: ${expected}`, () => assert.strictEqual(refusedForCredentials(detail), expected))
  }
})

describe("accessHint", () => {
  const login = { registry: "localhost:5000", credentials: passwordCredentials("u", "p") }
  const cases: ReadonlyArray<readonly [RegistryAccess, RegExp]> = [
    [{ registry: undefined, listed: false, login: undefined }, /name the image with its registry/],
    [{ registry: "localhost:5000", listed: false, login: undefined }, /add "localhost:5000" to registryCredentials/],
    [
      { registry: "localhost:5000", listed: true, login: undefined },
      /keeps no credentials .*docker login localhost:5000/
    ],
    [{ registry: "localhost:5000", listed: true, login }, /refused the credentials/]
  ]
  for (const [access, pattern] of cases) {
    it(`${access.registry} listed ${access.listed}, login ${access.login !== undefined}`, () =>
      assert.match(accessHint(access), pattern))
  }
})
