import { assert, describe, it } from "@effect/vitest"
import { Redacted, Result } from "effect"
import { type CredentialSource, type Credentials, credentialSource, helperAnswer } from "../src/index.ts"

/** Credentials with their secrets shown, for comparing. */
const plain = (credentials: Credentials | undefined) =>
  credentials === undefined
    ? undefined
    : credentials._tag === "Password"
      ? { user: credentials.username, password: Redacted.value(credentials.password) }
      : { token: Redacted.value(credentials.token) }

const shown = (source: Result.Result<CredentialSource, string>) =>
  Result.isFailure(source)
    ? { failure: source.failure }
    : source.success._tag === "Stored"
      ? { stored: plain(source.success.credentials) }
      : source.success

const auth = (text: string) => Buffer.from(text).toString("base64")

describe("credentialSource", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string, unknown]> = [
    ["no config entry", { auths: {} }, "localhost:5000", { _tag: "None" }],
    [
      "auths by host:port",
      { auths: { "localhost:5000": { auth: auth("u:p:w") } } },
      "localhost:5000",
      { stored: { user: "u", password: "p:w" } }
    ],
    [
      "auths key with scheme and path",
      { auths: { "https://Registry.Example/v1/": { auth: auth("u:p") } } },
      "registry.example",
      { stored: { user: "u", password: "p" } }
    ],
    [
      "another port is another registry",
      { auths: { "localhost:5000": { auth: auth("u:p") } } },
      "localhost:5001",
      { _tag: "None" }
    ],
    [
      "identity token wins over auth",
      { auths: { r: { auth: auth("u:p"), identitytoken: "tok" } } },
      "r",
      { stored: { token: "tok" } }
    ],
    [
      "username and password fields",
      { auths: { r: { username: "u", password: "p" } } },
      "r",
      { stored: { user: "u", password: "p" } }
    ],
    ["an empty entry (a store keeps it)", { auths: { r: {} } }, "r", { _tag: "None" }],
    [
      "credHelpers first",
      { credHelpers: { r: "pass" }, credsStore: "desktop", auths: { r: { auth: auth("u:p") } } },
      "r",
      { _tag: "Helper", helper: "pass" }
    ],
    [
      "credsStore for the rest",
      { credHelpers: { other: "pass" }, credsStore: "desktop", auths: { r: { auth: auth("u:p") } } },
      "r",
      { _tag: "Helper", helper: "desktop" }
    ],
    [
      "an empty credsStore is none",
      { credsStore: "", auths: { r: { auth: auth("u:p") } } },
      "r",
      { stored: { user: "u", password: "p" } }
    ],
    [
      "a helper that is a path",
      { credHelpers: { r: "../../bin/sh" } },
      "r",
      { failure: 'credHelpers["r"] names no credential helper Docker could run' }
    ],
    [
      "a credsStore that is not a string",
      { credsStore: 3 },
      "r",
      { failure: "credsStore names no credential helper Docker could run" }
    ],
    [
      "auth not base64 of user:password",
      { auths: { r: { auth: auth("nocolon") } } },
      "r",
      { failure: 'auths["r"].auth is not base64 of user:password' }
    ],
    [
      "auth without a user",
      { auths: { r: { auth: auth(":p") } } },
      "r",
      { failure: 'auths["r"].auth is not base64 of user:password' }
    ],
    ["an entry that is not an object", { auths: { r: "x" } }, "r", { failure: 'auths["r"] is not an object' }],
    ["a config that is not an object", [], "r", { failure: "is not a JSON object" }]
  ]
  for (const [name, config, registry, expected] of cases) {
    it(name, () => assert.deepStrictEqual(shown(credentialSource(config, registry)), expected))
  }

  it("a failure names keys, never the values", () => {
    const secret = auth("user-without-colon-secret")
    const source = credentialSource({ auths: { r: { auth: secret } } }, "r")
    assert.isTrue(Result.isFailure(source))
    if (Result.isFailure(source)) assert.notInclude(source.failure, secret)
  })
})

describe("helperAnswer", () => {
  const cases: ReadonlyArray<readonly [string, unknown]> = [
    ['{"ServerURL":"r","Username":"u","Secret":"s"}', { user: "u", password: "s" }],
    ['{"Username":"<token>","Secret":"t"}', { token: "t" }],
    ['{"Username":"","Secret":""}', undefined],
    ["{}", undefined],
    ['{"Secret":"s"}', { failure: "answered with a secret but no user name" }],
    ["not json", { failure: "answered with something other than JSON" }],
    ["[]", { failure: "answered with something other than a JSON object" }]
  ]
  for (const [stdout, expected] of cases) {
    it(stdout, () => {
      const answer = helperAnswer(stdout)
      assert.deepStrictEqual(Result.isFailure(answer) ? { failure: answer.failure } : plain(answer.success), expected)
    })
  }
})
