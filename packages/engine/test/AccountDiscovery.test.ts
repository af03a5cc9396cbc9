import { assert, describe, it } from "@effect/vitest"
import { parseCallerAccount, parseUserId } from "../src/index.ts"

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
