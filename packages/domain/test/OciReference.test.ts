import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { formatReference, imageRegistry, isLoopback, parseOciReference } from "../src/index.ts"

const digest = `sha256:${"a".repeat(64)}`

// The one grammar of an OCI reference: a feature's key (devcontainer's FeatureReference.ts), the
// registry client's fetch and an image's registry are all read by it.
describe("parseOciReference", () => {
  const accepted: ReadonlyArray<
    readonly [string, { registry: string; repository: string; tag: string; digest?: string; scheme: string }]
  > = [
    [
      "localhost:5000/features/node:1",
      { registry: "localhost:5000", repository: "features/node", tag: "1", scheme: "http" }
    ],
    ["localhost/a/b", { registry: "localhost", repository: "a/b", tag: "latest", scheme: "http" }],
    ["127.0.0.1:5000/a/b:1.2.3", { registry: "127.0.0.1:5000", repository: "a/b", tag: "1.2.3", scheme: "http" }],
    ["[::1]:5000/a/b", { registry: "[::1]:5000", repository: "a/b", tag: "latest", scheme: "http" }],
    [
      "registry.example:443/org/x/y:v1",
      { registry: "registry.example:443", repository: "org/x/y", tag: "v1", scheme: "https" }
    ],
    // The registry and the repository are lowercased, as the devcontainers CLI does; the tag is kept.
    [
      "Registry.Example/Org/Node:Latest-RC",
      { registry: "registry.example", repository: "org/node", tag: "Latest-RC", scheme: "https" }
    ],
    [
      `registry.example/org/node@${digest}`,
      { registry: "registry.example", repository: "org/node", tag: "latest", digest, scheme: "https" }
    ],
    [
      `registry.example/org/node:2@${digest}`,
      { registry: "registry.example", repository: "org/node", tag: "2", digest, scheme: "https" }
    ],
    [
      "registry.example/a__b/c-d/e.f_g:x",
      { registry: "registry.example", repository: "a__b/c-d/e.f_g", tag: "x", scheme: "https" }
    ],
    // 127.0.0.2 is loopback to the kernel, but only the names the CLI allows get plain HTTP.
    ["127.0.0.2:5000/a/b", { registry: "127.0.0.2:5000", repository: "a/b", tag: "latest", scheme: "https" }],
    ["localhost.example/a/b", { registry: "localhost.example", repository: "a/b", tag: "latest", scheme: "https" }],
    // A feature's key as devcontainer.json writes it: the namespace's capitals name the same feature.
    [
      "images.example/Devcontainers/Features/Node:1.2.3-rc_1",
      { registry: "images.example", repository: "devcontainers/features/node", tag: "1.2.3-rc_1", scheme: "https" }
    ]
  ]
  for (const [text, expected] of accepted) {
    it(`reads ${text}`, () => {
      const parsed = parseOciReference(text)
      assert.isTrue(Result.isSuccess(parsed), Result.isFailure(parsed) ? parsed.failure.detail : "")
      if (Result.isSuccess(parsed)) assert.deepStrictEqual(parsed.success, { digest: undefined, ...expected })
    })
  }

  const refused: ReadonlyArray<readonly [string, RegExp]> = [
    ["", /empty/],
    ["node", /names no registry/],
    ["devcontainers/features/node:1", /names no registry/],
    ["features/node", /names no registry/],
    ["Org/node", /names no registry/],
    ["images.example/f/no de:1", /not a repository path/],
    ["localhost:5000", /names no registry/],
    ["localhost:5000/", /not a repository path/],
    ["registry.example/org//node", /not a repository path/],
    ["registry.example/org/-node", /not a repository path/],
    ["registry.example/org/node!", /not a repository path/],
    ["registry.example/org/node:", /not a valid tag/],
    ["registry.example/org/node:-x", /not a valid tag/],
    [`registry.example/org/node:${"x".repeat(129)}`, /not a valid tag/],
    ["registry.example/org/node@sha256:abc", /not a sha256 digest/],
    [`registry.example/org/node@sha512:${"a".repeat(64)}`, /not a sha256 digest/],
    [`registry.example/org/node@sha256:${"A".repeat(64)}`, /not a sha256 digest/],
    ["registry.example:99999/org/node", /invalid port/],
    ["registry.example:x/org/node", /invalid port/],
    ["-bad.example/org/node", /not a registry host/],
    ["bad_host.example/org/node", /not a registry host/],
    [`registry.example/${"a".repeat(250)}`, /longer than 255/]
  ]
  for (const [text, pattern] of refused) {
    it(`refuses ${JSON.stringify(text)}`, () => {
      const parsed = parseOciReference(text)
      assert.isTrue(Result.isFailure(parsed))
      if (Result.isFailure(parsed)) {
        assert.match(parsed.failure.detail, pattern)
        // A short id (no registry) is told apart: a feature's reader names the forms a feature may take.
        assert.strictEqual(parsed.failure.kind, /names no registry/.test(pattern.source) ? "no-registry" : "malformed")
      }
    })
  }

  it("writes a reference back as it was read", () => {
    const parsed = Result.getOrThrow(parseOciReference(`localhost:5000/a/b:1@${digest}`))
    assert.strictEqual(formatReference(parsed), `localhost:5000/a/b:1@${digest}`)
  })
})

describe("isLoopback", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["localhost", true],
    ["localhost:5000", true],
    ["LOCALHOST:1", true],
    ["127.0.0.1:5000", true],
    ["[::1]:5000", true],
    ["[::1]", true],
    ["127.0.0.2", false],
    ["localhost.example", false],
    ["registry.example", false],
    ["[::2]:5000", false]
  ]
  for (const [registry, expected] of cases) {
    it(`${registry}: ${expected}`, () => assert.strictEqual(isLoopback(registry), expected))
  }
})

describe("imageRegistry", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined]> = [
    ["ubuntu", undefined],
    ["ubuntu:22.04", undefined],
    ["library/ubuntu", undefined],
    ["org/image:tag", undefined],
    ["localhost/image", "localhost"],
    ["localhost:5000/org/image:1", "localhost:5000"],
    ["Registry.Example/org/image", "registry.example"],
    ["registry.example:8443/image@sha256:abc", "registry.example:8443"],
    ["[::1]:5000/image", "[::1]:5000"],
    ["Org/image", "org"]
  ]
  for (const [image, expected] of cases) {
    it(`${image}: ${expected}`, () => assert.strictEqual(imageRegistry(image), expected))
  }
})
