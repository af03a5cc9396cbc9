import { assert, describe, it } from "@effect/vitest"
import { isRootUser, isTrustedRepository } from "../src/index.ts"

const patterns = ["github.com/acme/api", "github.com/tools/*", "gitlab.example.com/group/sub/*"]

// host, repository, trusted
const trust: ReadonlyArray<readonly [string, string, boolean]> = [
  ["github.com", "acme/api", true],
  ["GitHub.COM", "acme/api", true],
  ["github.com", "acme/web", false],
  ["github.com", "Acme/api", false],
  ["github.com", "tools/lint", true],
  ["github.com", "tools", false],
  ["github.com", "tools/lint/extra", false],
  ["gitlab.example.com", "acme/api", false],
  ["gitlab.example.com", "group/sub/project", true],
  ["gitlab.example.com", "group/project", false],
  ["example.com", "github.com/acme/api", false]
]

describe("isTrustedRepository", () => {
  for (const [host, repository, expected] of trust) {
    it(`${host} ${repository} → ${expected}`, () =>
      assert.strictEqual(isTrustedRepository(patterns, host, repository), expected))
  }
  it("a * stands for the last segment only", () => {
    assert.isFalse(isTrustedRepository(["github.com/*/api"], "github.com", "acme/api"))
    assert.isFalse(isTrustedRepository(["github.com/*"], "github.com", "acme/api"))
    assert.isFalse(isTrustedRepository(["*/acme/api"], "github.com", "acme/api"))
  })
  it("no patterns trust nothing", () => assert.isFalse(isTrustedRepository([], "github.com", "acme/api")))
})

const users: ReadonlyArray<readonly [string, boolean]> = [
  ["root", true],
  ["0", true],
  ["0:0", true],
  ["root:root", true],
  ["node", false],
  ["vscode", false],
  ["1000", false],
  ["rootless", false],
  ["", false]
]

describe("isRootUser", () => {
  for (const [user, expected] of users)
    it(`${JSON.stringify(user)} → ${expected}`, () => assert.strictEqual(isRootUser(user), expected))
})
