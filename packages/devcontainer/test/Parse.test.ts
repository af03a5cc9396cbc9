import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mergeMetadata, parseDevcontainer, readDevcontainerText } from "../src/index.ts"

// devcontainer.json is read as VS Code reads it: the devcontainers CLI keeps
// what jsonc-parser's tolerant `parse` recovers. Each row: the text, the
// properties recovered, the warnings (line:column of each error).

const file = ".devcontainer/devcontainer.json"
const recovered = (at: string, error: string) => `${file}:${at}: ${error} (recovered as VS Code does)`

const rows: ReadonlyArray<{
  readonly name: string
  readonly text: string
  readonly config: Record<string, unknown>
  readonly warnings: ReadonlyArray<string>
}> = [
  {
    name: "comments and no errors: no warning",
    text: '// the app\n{\n  /* base */ "image": "node:22"\n}\n',
    config: { image: "node:22" },
    warnings: []
  },
  {
    name: "a missing closing brace",
    text: '{\n  "image": "node:22",\n  "remoteUser": "node"\n',
    config: { image: "node:22", remoteUser: "node" },
    warnings: [recovered("4:1", "CloseBraceExpected")]
  },
  {
    name: "a trailing comma (the CLI's options report it)",
    text: '{\n  "image": "node:22",\n}\n',
    config: { image: "node:22" },
    warnings: [recovered("3:1", "PropertyNameExpected")]
  },
  {
    name: "a trailing comma in an array",
    text: '{ "image": "x",\n  "forwardPorts": [3000, ] }',
    config: { image: "x", forwardPorts: [3000] },
    warnings: [recovered("2:26", "ValueExpected")]
  },
  {
    name: "a second object after the first: the first is kept",
    text: '{ "image": "node:22" }\n{ "image": "other", "privileged": true }\n',
    config: { image: "node:22" },
    warnings: [recovered("2:1", "EndOfFileExpected")]
  },
  {
    name: "an unquoted value: the property is left out",
    text: '{\n  "image": "node:22",\n  "postCreateCommand": npm ci\n}',
    config: { image: "node:22" },
    warnings: [
      recovered("3:24", "InvalidSymbol"),
      recovered("3:28", "InvalidSymbol"),
      recovered("4:1", "ValueExpected")
    ]
  },
  {
    name: "CRLF line ends count as one",
    text: '{\r\n  "image": "x"\r\n',
    config: { image: "x" },
    warnings: [recovered("3:1", "CloseBraceExpected")]
  },
  {
    name: "past five errors the rest are counted",
    text: '{ "image": "x", "a": @, "b": @, "c": @ }',
    config: { image: "x" },
    warnings: [
      recovered("1:22", "InvalidSymbol"),
      recovered("1:23", "ValueExpected"),
      recovered("1:30", "InvalidSymbol"),
      recovered("1:31", "ValueExpected"),
      recovered("1:38", "InvalidSymbol"),
      `${file}: 1 more syntax error recovered as VS Code does`
    ]
  }
]

describe("devcontainer.json read as VS Code reads it", () => {
  for (const row of rows) {
    it.effect(row.name, () =>
      Effect.gen(function* () {
        const read = yield* readDevcontainerText(file, row.text)
        assert.deepStrictEqual(read.config, row.config)
        assert.deepStrictEqual(read.warnings, row.warnings)
      })
    )
  }

  const refused: ReadonlyArray<readonly [string, string, string]> = [
    ["an array", '["node:22"]', `${file}: expected a JSON object`],
    ["a string", '"node:22"', `${file}: expected a JSON object`],
    ["an empty file", "", `${file}: expected a JSON object; invalid JSON at 1:1: ValueExpected`],
    ["text, not JSON", "image: node", `${file}: expected a JSON object; invalid JSON at 1:1: InvalidSymbol`],
    [
      "an array before an object",
      '[1]\n{ "image": "x" }',
      `${file}: expected a JSON object; invalid JSON at 2:1: EndOfFileExpected`
    ]
  ]
  for (const [name, text, message] of refused) {
    it.effect(`what is not an object once recovered is an error: ${name}`, () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(parseDevcontainer(file, text))
        assert.strictEqual(error.message, message)
      })
    )
  }
})

describe("the image's metadata label is strict JSON, as the CLI reads it", () => {
  const labelOf = (label: string) => mergeMetadata(label, { image: "x" }, file, "not trusted")

  it("a label with a trailing comma or a comment is ignored with a warning", () => {
    for (const label of ['[{ "remoteUser": "dev", }]', '[{ "remoteUser": "dev" } // mine\n]']) {
      const merged = labelOf(label)
      assert.isUndefined(merged.remoteUser)
      assert.deepStrictEqual(merged.warnings, [
        "the image's devcontainer.metadata label: invalid JSON: the label is ignored (the image's own devcontainer settings are not applied)"
      ])
    }
  })

  it("a strict label is read, an object alone as one entry", () => {
    assert.strictEqual(labelOf('[{ "remoteUser": "dev" }]').remoteUser?.name, "dev")
    assert.strictEqual(labelOf('{ "remoteUser": "ops" }').remoteUser?.name, "ops")
  })
})
