import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  type DevcontainerConfig,
  mergeMetadata,
  parseDevcontainer,
  readDevcontainerText,
  sizeToMb
} from "../src/index.ts"

const sizes: ReadonlyArray<readonly [string, number]> = [
  ["4gb", 4096],
  ["4GB", 4096],
  ["512mb", 512],
  ["1tb", 1048576],
  ["2048kb", 2],
  ["1kb", 1],
  ["1073741824", 1024],
  ["1", 1]
]

describe("sizeToMb", () => {
  for (const [size, mb] of sizes) it(`${size} → ${mb} MB`, () => assert.strictEqual(sizeToMb(size), mb))
})

const config = (text: string): DevcontainerConfig => Effect.runSync(parseDevcontainer("devcontainer.json", text))

describe("mergeMetadata", () => {
  it("a label that is a single object is one entry; hooks run hook by hook, image first", () => {
    const merged = mergeMetadata(
      '{ "onCreateCommand": "image-create", "postCreateCommand": "image-post", "remoteUser": "vscode", "forwardPorts": [80] }',
      config(
        '{ "image": "x", "postCreateCommand": "repo-post", "onCreateCommand": "repo-create", "forwardPorts": [80, 443] }'
      ),
      "devcontainer.json",
      "untrusted"
    )
    assert.deepStrictEqual(
      merged.steps.map((step) => [step.hook, step.command, step.origin]),
      [
        ["onCreateCommand", "image-create", "image metadata"],
        ["onCreateCommand", "repo-create", "devcontainer.json"],
        ["postCreateCommand", "image-post", "image metadata"],
        ["postCreateCommand", "repo-post", "devcontainer.json"]
      ]
    )
    assert.deepStrictEqual(merged.remoteUser, { name: "vscode", origin: "image metadata" })
    assert.deepStrictEqual(merged.forwardPorts, [80, 443])
    assert.deepStrictEqual(merged.warnings, [])
  })
  it("devcontainer.json's users win over the label's", () => {
    const merged = mergeMetadata(
      '[{ "remoteUser": "vscode", "containerUser": "vscode" }]',
      config('{ "image": "x", "remoteUser": "node" }'),
      "devcontainer.json",
      "untrusted"
    )
    assert.deepStrictEqual(merged.remoteUser, { name: "node", origin: "devcontainer.json" })
    assert.deepStrictEqual(merged.containerUser, { name: "vscode", origin: "image metadata" })
  })
  it("no label, an empty label: devcontainer.json alone", () => {
    for (const label of [undefined, "", "  "]) {
      const merged = mergeMetadata(
        label,
        config('{ "image": "x", "containerEnv": { "A": "1" } }'),
        "devcontainer.json",
        "untrusted"
      )
      assert.deepStrictEqual(merged.containerEnv, { A: "1" })
      assert.deepStrictEqual(merged.warnings, [])
    }
  })
})

// label → the entrypoints the container runs at its start, in order
const entrypointCases: ReadonlyArray<readonly [string, string | undefined, ReadonlyArray<string>]> = [
  ["no label", undefined, []],
  [
    "each entry's, in the label's order (a base image's, then each feature's)",
    '[{ "entrypoint": "/base-init.sh" }, { "id": "a" }, { "id": "b", "entrypoint": "/usr/local/share/b-init.sh" }]',
    ["/base-init.sh", "/usr/local/share/b-init.sh"]
  ],
  ["a single object", '{ "entrypoint": "/init.sh" }', ["/init.sh"]],
  ["an empty one or one that is not a string: none", '[{ "entrypoint": " " }, { "entrypoint": ["x"] }]', []],
  ["a label that is ignored (malformed): none", '[{ "entrypoint": "/init.sh", "remoteUser": 3 }]', []]
]

describe("mergeMetadata's entrypoints", () => {
  for (const [name, label, expected] of entrypointCases) {
    it(name, () =>
      assert.deepStrictEqual(
        mergeMetadata(label, config('{ "image": "x" }'), "devcontainer.json", null).entrypoints,
        expected
      )
    )
  }
  it("devcontainer.json has no entrypoint of its own: an unknown property, warned of and dropped", () => {
    const read = Effect.runSync(readDevcontainerText("devcontainer.json", '{ "image": "x", "entrypoint": "/x" }'))
    assert.notProperty(read.config, "entrypoint")
    assert.isTrue(read.warnings.some((warning) => warning.includes("entrypoint")))
  })
})
