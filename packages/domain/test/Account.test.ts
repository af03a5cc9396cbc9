import { assert, describe, it } from "@effect/vitest"
import { type AccountKind, accountKind, isAmbiguousProfile, isSupersededBy, type Provider } from "@prbox/domain"

describe("accountKind", () => {
  const table: ReadonlyArray<readonly [Provider, string, AccountKind]> = [
    ["codecommit", "123456789012", "discovered"],
    ["codecommit", "12345678901", "profile"],
    ["codecommit", "1234567890123", "profile"],
    ["codecommit", "dev", "profile"],
    ["codecommit", "", "empty"],
    ["github", "583231", "discovered"],
    ["github", "octocat", "profile"],
    ["gitlab", "42", "discovered"],
    ["gitlab", "work", "profile"],
    ["bitbucket", "7", "discovered"],
    ["git", "123456789012", "profile"],
    ["git", "", "empty"]
  ]
  for (const [provider, account, kind] of table) {
    it(`${provider} ${JSON.stringify(account)} is ${kind}`, () => {
      assert.strictEqual(accountKind(provider, account), kind)
    })
  }
})

describe("isAmbiguousProfile", () => {
  const table: ReadonlyArray<readonly [Provider, string, boolean]> = [
    ["codecommit", "123456789012", true],
    ["codecommit", "prod", false],
    ["github", "2024", true],
    ["github", "work-2024", false],
    ["git", "2024", false]
  ]
  for (const [provider, profile, ambiguous] of table) {
    it(`${provider} profile ${profile} is ${ambiguous ? "" : "not "}ambiguous`, () => {
      assert.strictEqual(isAmbiguousProfile(provider, profile), ambiguous)
    })
  }
})

describe("isSupersededBy", () => {
  const table: ReadonlyArray<readonly [string, string, string, boolean]> = [
    // row account, discovered, profile, superseded
    ["dev", "123456789012", "dev", true],
    ["", "123456789012", "dev", true],
    ["123456789012", "123456789012", "dev", false],
    ["other", "123456789012", "dev", false],
    ["210987654321", "123456789012", "dev", false]
  ]
  for (const [row, discovered, profile, superseded] of table) {
    it(`row ${JSON.stringify(row)} vs discovered ${discovered} (profile ${profile}): ${superseded}`, () => {
      assert.strictEqual(isSupersededBy(row, discovered, profile), superseded)
    })
  }
})
