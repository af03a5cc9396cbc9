import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parse } from "jsonc-parser"
import { parseFeatureReference, type RequestedFeature } from "../src/index.ts"
import {
  assertCorpusVerdict,
  corpusEntries,
  corpusText,
  featureStore,
  openCorpusFile,
  type Reason,
  resolveFeaturesLocally
} from "./corpus.ts"
import { composeFiles } from "./corpusCompose.ts"

// Real devcontainer.json files from public repositories (test/corpus/README.md),
// each opened as an untrusted PR's would be. The test prints how many open and
// why each other does not. Its Compose files are rendered by a stand-in for
// Compose (composeRender.ts: this project runs no process); the engine's
// CorpusCompose.test.ts opens the same corpus with the real docker-compose.

const entries = corpusEntries()

// A reference's first component is a registry host when it is a domain name, has a port, or is localhost (Docker's rule).
const host = /^(([a-z0-9-]+\.)+[a-z0-9-]+(:\d+)?|[a-z0-9-]+:\d+|localhost)$/i
const namesAHost = (reference: string) => {
  const [first = "", ...rest] = reference.split("/")
  return rest.length > 0 && host.test(first)
}

const dind = "localhost:5000/devcontainers/features/docker-in-docker:2"
const requested = (key: string): ReadonlyArray<RequestedFeature> => {
  const parsed = parseFeatureReference(key, ".devcontainer/devcontainer.json")
  return parsed.ok ? [{ reference: parsed.reference, value: true }] : []
}

// The features a devcontainer.json asks for, what resolving them against the local copies answers (undefined: they resolve).
const featureRows: ReadonlyArray<readonly [string, ReadonlyArray<RequestedFeature>, Reason | undefined]> = [
  ["none", [], undefined],
  ["a stored feature", requested(dind), undefined],
  [
    "a feature not stored",
    requested("localhost:5000/devcontainers/features/docker-in-docker:9"),
    { category: "feature missing", detail: "<registry>/devcontainers/features/docker-in-docker:9" }
  ]
]

describe("features resolved against the local copies", () => {
  const store = featureStore()
  for (const [name, features, expected] of featureRows) {
    it(name, () => assert.deepStrictEqual(resolveFeaturesLocally(features, store), expected))
  }
})

describe("the corpus of real devcontainer.json files", () => {
  it("holds at least 100 files from distinct repositories, each with its commit", () => {
    assert.isAtLeast(entries.length, 100)
    assert.strictEqual(new Set(entries.map((entry) => entry.repository)).size, entries.length)
    for (const entry of entries) {
      assert.match(entry.commit, /^[0-9a-f]{40}$/, entry.file)
      assert.match(entry.repository, /^[^/]+\/[^/]+$/, entry.file)
      assert.match(entry.path, /(^|\/)\.?devcontainer\.json$/, entry.file)
    }
  })

  it("names no registry host: every image (Compose files' too) and feature reference goes through <registry>", () => {
    for (const entry of entries) {
      const config = parse(corpusText(entry), [], { allowTrailingComma: true }) as Record<string, unknown> | undefined
      const references = [
        ...(typeof config?.image === "string" ? [config.image] : []),
        ...Object.keys((config?.features ?? {}) as object)
      ]
      for (const reference of references) assert.isFalse(namesAHost(reference), `${entry.file}: ${reference}`)
    }
    for (const { file, text } of composeFiles()) {
      for (const [, image = ""] of text.matchAll(/^\s*image:\s*["']?([^\s"'#]+)/gm)) {
        assert.isFalse(namesAHost(image), `compose/${file}: ${image}`)
      }
    }
  })

  it.effect("opens at least today's count; every other file has a named reason (Compose rendered by a stand-in)", () =>
    Effect.gen(function* () {
      const store = featureStore()
      const outcomes = yield* Effect.forEach(entries, (entry) => openCorpusFile(entry, store))
      assertCorpusVerdict(outcomes)
    })
  )
})
