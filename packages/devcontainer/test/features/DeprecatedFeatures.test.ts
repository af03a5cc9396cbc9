import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { readDevcontainer } from "../../src/index.ts"

// Deprecated short feature ids, read as the devcontainers CLI reads them,
// under config.json's featuresRegistry.

const file = ".devcontainer/devcontainer.json"
const registry = "localhost:5000/devcontainers/features"

const read = (features: Record<string, unknown>, featuresRegistry: string | null = registry) =>
  Effect.result(
    readDevcontainer({
      located: { path: file, text: JSON.stringify({ image: "x", features }) },
      host: "github.com",
      repository: "someone/fork",
      trustedRepositories: [],
      ...(featuresRegistry === null ? {} : { featuresRegistry })
    })
  )

// name, features as written, the features read (key → value).
const rows: ReadonlyArray<readonly [string, Record<string, unknown>, Record<string, unknown>]> = [
  ["a migrated id", { "docker-in-docker": {} }, { [`${registry}/docker-in-docker:1`]: {} }],
  ["its value kept (a version string)", { terraform: "latest" }, { [`${registry}/terraform:1`]: "latest" }],
  [
    "a renamed id",
    { golang: "1.22", common: {} },
    { [`${registry}/go:1`]: "1.22", [`${registry}/common-utils:1`]: {} }
  ],
  ["an id folded into another feature's options", { gradle: {} }, { [`${registry}/java:1`]: { installGradle: true } }],
  [
    "folded into the feature named beside it (short, then mapped)",
    { java: "17", maven: true },
    { [`${registry}/java:1`]: { version: "17", installMaven: true } }
  ],
  [
    "folded into the feature named in full",
    { [`${registry}/python:1`]: { version: "3.12" }, jupyterlab: {} },
    { [`${registry}/python:1`]: { version: "3.12", installJupyterlab: true } }
  ],
  ["a full reference is left alone", { [`${registry}/node:1`]: {} }, { [`${registry}/node:1`]: {} }]
]

describe("deprecated short feature ids", () => {
  for (const [name, features, expected] of rows) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const result = yield* read(features)
        assert.strictEqual(result._tag, "Success", result._tag === "Failure" ? result.failure.message : "")
        if (result._tag !== "Success") return
        assert.deepStrictEqual(
          Object.fromEntries(result.success.features.map((one) => [one.reference.key, one.value])),
          expected
        )
        const warned = result.success.warnings.filter((warning) => warning.includes("deprecated"))
        assert.strictEqual(warned.length, Object.keys(features).filter((key) => !key.includes("/")).length)
      })
    )
  }

  it.effect("without featuresRegistry: an error naming the setting", () =>
    Effect.gen(function* () {
      const result = yield* read({ "docker-in-docker": {} }, null)
      assert.strictEqual(result._tag, "Failure")
      if (result._tag !== "Failure") return
      assert.strictEqual(result.failure.property, 'features["docker-in-docker"]')
      assert.include(result.failure.detail, 'set "featuresRegistry" in your config.json')
    })
  )

  it.effect("a short id the CLI does not map is still refused", () =>
    Effect.gen(function* () {
      const result = yield* read({ fish: {} })
      assert.strictEqual(result._tag, "Failure")
      if (result._tag === "Failure")
        assert.include(result.failure.detail, "short and GitHub-release ids are not supported")
    })
  )
})
