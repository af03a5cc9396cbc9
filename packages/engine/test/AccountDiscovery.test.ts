import { assert, describe, it } from "@effect/vitest"
import type { Provider } from "@prbox/domain"
import { credentialQuery, parseCallerAccount, parseCredentialPassword, parseUserId, userRequest } from "../src/index.ts"

describe("userRequest", () => {
  const table: ReadonlyArray<readonly [Provider, string, string | undefined]> = [
    ["github", "github.com", "https://api.github.com/user"],
    ["github", "git.example.com", "https://git.example.com/api/v3/user"],
    ["gitlab", "gitlab.example.com", "https://gitlab.example.com/api/v4/user"],
    ["bitbucket", "bitbucket.org", undefined],
    ["codecommit", "eu-west-1", undefined],
    ["git", "local", undefined]
  ]
  for (const [provider, host, url] of table) {
    it(`${provider} on ${host}: ${url ?? "no user call"}`, () => {
      const request = userRequest(provider, host, "tok-123")
      assert.strictEqual(request?.url, url)
      if (request !== undefined) assert.strictEqual(request.headers.authorization, "Bearer tok-123")
    })
  }
})

describe("parseUserId", () => {
  const table: ReadonlyArray<readonly [string, unknown, string | undefined]> = [
    ["a numeric id", { id: 583231, login: "octo" }, "583231"],
    ["a string id", { id: "583231" }, undefined],
    ["zero", { id: 0 }, undefined],
    ["a fraction", { id: 1.5 }, undefined],
    ["no id", { login: "octo" }, undefined],
    ["not an object", "583231", undefined],
    ["null", null, undefined]
  ]
  for (const [name, body, expected] of table) {
    it(`${name} -> ${expected}`, () => assert.strictEqual(parseUserId(body), expected))
  }
})

describe("parseCallerAccount", () => {
  const table: ReadonlyArray<readonly [string, string | undefined, string | undefined]> = [
    ["a 12-digit account", "123456789012", "123456789012"],
    ["11 digits", "12345678901", undefined],
    ["letters", "12345678901a", undefined],
    ["missing", undefined, undefined]
  ]
  for (const [name, account, expected] of table) {
    it(`${name} -> ${expected}`, () => assert.strictEqual(parseCallerAccount({ Account: account }), expected))
  }
})

describe("git credential", () => {
  it("asks for the host over https and reads only the password", () => {
    assert.strictEqual(credentialQuery("github.com"), "protocol=https\nhost=github.com\n\n")
    assert.strictEqual(
      parseCredentialPassword("protocol=https\nhost=github.com\nusername=u\npassword=tok=with=equals\n"),
      "tok=with=equals"
    )
    assert.isUndefined(parseCredentialPassword("protocol=https\nhost=github.com\n"))
    assert.isUndefined(parseCredentialPassword("password=\n"))
  })
})
