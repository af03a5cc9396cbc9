import { assert, describe, it } from "@effect/vitest"
import { parseChallenge } from "../src/index.ts"

describe("parseChallenge", () => {
  const cases: ReadonlyArray<readonly [string | null, ReturnType<typeof parseChallenge>]> = [
    [
      'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:org/node:pull"',
      {
        _tag: "Bearer",
        realm: "https://auth.example/token",
        service: "registry.example",
        scope: "repository:org/node:pull"
      }
    ],
    // Case-insensitive scheme and keys, spaces around separators, unquoted values.
    [
      'bearer Realm = "https://auth.example/token" , Service=registry.example',
      { _tag: "Bearer", realm: "https://auth.example/token", service: "registry.example", scope: undefined }
    ],
    // A scope of several actions is quoted and holds a comma.
    [
      'Bearer realm="https://a.example/t",scope="repository:x/y:pull,push"',
      { _tag: "Bearer", realm: "https://a.example/t", service: undefined, scope: "repository:x/y:pull,push" }
    ],
    [
      'Bearer realm="https://a.example/t\\"q"',
      { _tag: "Bearer", realm: 'https://a.example/t"q', service: undefined, scope: undefined }
    ],
    ['Basic realm="prbox-test"', { _tag: "Basic" }],
    ["BASIC", { _tag: "Basic" }],
    ['Bearer service="x"', undefined],
    ['Bearer realm=""', undefined],
    ["Bearer", undefined],
    ['Bearer realm="unterminated', undefined],
    ['Digest realm="x"', undefined],
    ["", undefined],
    [null, undefined]
  ]
  for (const [header, expected] of cases) {
    it(`${JSON.stringify(header)}`, () => assert.deepStrictEqual(parseChallenge(header), expected))
  }
})
