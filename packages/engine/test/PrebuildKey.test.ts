import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { canonicalJson, type PrebuildKeyInputs, prebuildKey, readsBuildContext } from "../src/prebuild/PrebuildKey.ts"

const inputs = (overrides: Partial<PrebuildKeyInputs> = {}): PrebuildKeyInputs => ({
  repository: { host: "localhost", repository: "acme/widgets" },
  environment: { _tag: "Configured", image: "localhost/dev:1" },
  config: { setupCommands: [], env: {}, mounts: [], cpus: null, memoryMb: null, pidsLimit: null },
  ...overrides
})

describe("prebuild key", () => {
  it("canonical JSON: the same members in any order give the same text; undefined members are left out", () => {
    assert.strictEqual(
      canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } }),
      canonicalJson({ a: { d: [1, { x: 1, y: 2 }] }, b: 1 })
    )
    assert.notStrictEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }), "an array's order counts")
    assert.strictEqual(canonicalJson({ a: "x", b: null }), '{"a":"x","b":null}')
  })

  it.effect("equal inputs, equal keys; any input that differs, another key", () =>
    Effect.gen(function* () {
      const key = yield* prebuildKey(inputs())
      assert.match(key, /^[0-9a-f]{40}$/)
      assert.strictEqual(yield* prebuildKey(inputs()), key)
      const others = [
        inputs({ repository: { host: "localhost", repository: "acme/other" } }),
        inputs({ environment: { _tag: "Configured", image: "localhost/dev:2" } }),
        inputs({ environment: { _tag: "Default", image: "localhost/dev:1" } }),
        inputs({
          config: { setupCommands: ["make"], env: {}, mounts: [], cpus: null, memoryMb: null, pidsLimit: null }
        }),
        inputs({
          config: { setupCommands: [], env: { A: "1" }, mounts: [], cpus: null, memoryMb: null, pidsLimit: null }
        })
      ]
      for (const other of others) assert.notStrictEqual(yield* prebuildKey(other), key, canonicalJson(other))
    })
  )

  const dockerfiles: ReadonlyArray<readonly [string, string, boolean]> = [
    ["FROM and RUN only", "FROM debian\nRUN apt-get update\n", false],
    ["COPY from the context", "FROM debian\nCOPY package.json /app/\n", true],
    ["ADD, lower case", "FROM debian\nadd . /app\n", true],
    ["COPY from another stage reads no context", "FROM debian AS a\nFROM debian\nCOPY --from=a /x /x\n", false],
    ["an indented COPY after a continued RUN", "FROM debian\nRUN true \\\n  && true\n  COPY x /x\n", true],
    ["COPY inside a continued RUN line is not an instruction", "FROM debian\nRUN echo \\\n COPY\n", false],
    ["a comment that says COPY", "FROM debian\n# COPY nothing\n", false]
  ]
  for (const [name, text, reads] of dockerfiles) {
    it(`readsBuildContext: ${name}`, () => assert.strictEqual(readsBuildContext(text), reads))
  }
})
