import { assert, describe, it } from "@effect/vitest"
import { parseFeatureReference } from "../../src/index.ts"

const file = ".devcontainer/devcontainer.json"
const digest = `sha256:${"a".repeat(64)}`

// key → the reference's tag and its source-specific fields, or the start of why it is refused
const accepted: ReadonlyArray<readonly [string, Readonly<Record<string, unknown>>]> = [
  [
    "images.example/devcontainers/features/node:1",
    { _tag: "Oci", resource: "images.example/devcontainers/features/node", id: "node" }
  ],
  ["localhost:5000/f/go", { _tag: "Oci", resource: "localhost:5000/f/go", id: "go" }],
  [`images.example/f/node@${digest}`, { _tag: "Oci", id: "node" }],
  ["images.example/Org/Features/Node:1", { resource: "images.example/org/features/node", id: "node" }],
  [
    "https://files.example/releases/devcontainer-feature-hello.tgz",
    { _tag: "Tarball", id: "hello", url: "https://files.example/releases/devcontainer-feature-hello.tgz" }
  ],
  ["http://127.0.0.1:8080/tool.tgz", { _tag: "Tarball", id: "tool" }],
  ["./local-tool", { _tag: "Local", folder: ".devcontainer/local-tool", id: "local-tool" }],
  ["./features/x", { _tag: "Local", folder: ".devcontainer/features/x", id: "x" }]
]

const refused: ReadonlyArray<readonly [string, string]> = [
  ["node", "a feature is an OCI reference"],
  ["devcontainers/features/node", "a feature is an OCI reference"],
  // The grammar's own refusals (domain's OciReference.test.ts holds its table), passed on as they are.
  ["images.example/f/no de:1", "is not a repository path"],
  ["images.example/f/node@sha256:abc", "is not a sha256 digest"],
  ["http://files.example/tool.tgz", "a feature tarball must be fetched over https"],
  ["https://user:secret@files.example/tool.tgz", "a feature URL must not carry credentials"],
  ["../outside", "a local feature must be a folder inside .devcontainer/"],
  ["./../../etc", "a local feature must be a folder inside .devcontainer/"],
  ["./", "a local feature must be a folder inside .devcontainer/"]
]

describe("parseFeatureReference", () => {
  for (const [key, expected] of accepted) {
    it(`${key} is accepted`, () => {
      const parsed = parseFeatureReference(key, file)
      assert.isTrue(parsed.ok)
      if (!parsed.ok) return
      for (const [field, value] of Object.entries(expected)) {
        assert.deepStrictEqual((parsed.reference as unknown as Record<string, unknown>)[field], value, field)
      }
    })
  }
  for (const [key, why] of refused) {
    it(`${key} is refused: ${why}`, () => {
      const parsed = parseFeatureReference(key, file)
      assert.isFalse(parsed.ok)
      if (!parsed.ok) assert.include(parsed.detail, why)
    })
  }
  it("a .devcontainer.json at the root has no .devcontainer/ folder for local features", () =>
    assert.isFalse(parseFeatureReference("./tool", ".devcontainer.json").ok))
  it("an OCI key carries the reference as domain's grammar reads it, for the fetch", () => {
    const parsed = parseFeatureReference(`Images.Example/F/Node:1@${digest}`, file)
    assert.isTrue(parsed.ok && parsed.reference._tag === "Oci")
    if (parsed.ok && parsed.reference._tag === "Oci") {
      assert.deepStrictEqual(parsed.reference.oci, {
        registry: "images.example",
        repository: "f/node",
        tag: "1",
        digest,
        scheme: "https"
      })
      assert.strictEqual(parsed.reference.resource, "images.example/f/node")
    }
  })
  it("a named configuration's local feature may sit beside it", () => {
    const parsed = parseFeatureReference("./tool", ".devcontainer/api/devcontainer.json")
    assert.isTrue(
      parsed.ok && parsed.reference._tag === "Local" && parsed.reference.folder === ".devcontainer/api/tool"
    )
  })
})
