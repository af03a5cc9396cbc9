import { assert, describe, it } from "@effect/vitest"
import { bindSources, sealNestedBinds } from "../src/environment/ComposeBinds.ts"
import { composeWorkspaceFolder } from "../src/environment/PrepareCompose.ts"

const project = (services: Record<string, ReadonlyArray<unknown>>) => ({
  services: Object.fromEntries(Object.entries(services).map(([name, volumes]) => [name, { image: "x", volumes }]))
})

describe("ComposeBinds", () => {
  it("lists bind sources in both syntaxes, never named volumes", () => {
    const sources = bindSources(
      project({
        a: ["/copy/data:/data:rw", "cache:/cache", { type: "bind", source: "/copy/b", target: "/b" }],
        b: [{ type: "volume", source: "db", target: "/db" }]
      })
    )
    assert.deepStrictEqual(sources, ["/copy/data", "/copy/b"])
  })

  const cases: ReadonlyArray<{
    readonly name: string
    readonly services: Record<string, ReadonlyArray<unknown>>
    readonly sealed: ReadonlyArray<string>
    readonly expect?: Record<string, ReadonlyArray<unknown>>
  }> = [
    {
      name: "a folder holding another service's file bind is read-only, in the short syntax",
      services: { a: ["/copy/data:/data:rw"], b: ["/copy/data/conf:/conf:ro"] },
      sealed: ["services.a.volumes[0]"],
      expect: { a: ["/copy/data:/data:ro"], b: ["/copy/data/conf:/conf:ro"] }
    },
    {
      name: "the long syntax gets read_only, other options kept",
      services: {
        a: [{ type: "bind", source: "/copy", target: "/src", bind: { create_host_path: true } }, "/copy/x:/x"]
      },
      sealed: ["services.a.volumes[0]"],
      expect: {
        a: [
          { type: "bind", source: "/copy", target: "/src", bind: { create_host_path: true }, read_only: true },
          "/copy/x:/x"
        ]
      }
    },
    {
      name: "short options other than rw are kept",
      services: { a: ["/copy:/src:rw,z"], b: ["/copy/x:/x"] },
      sealed: ["services.a.volumes[0]"],
      expect: { a: ["/copy:/src:ro,z"], b: ["/copy/x:/x"] }
    },
    {
      name: "the same folder bound twice holds nothing else: both stay writable",
      services: { a: ["/copy/data:/data"], b: ["/copy/data:/d"] },
      sealed: []
    },
    {
      name: "siblings with a common prefix are not nested",
      services: { a: ["/copy/data:/data"], b: ["/copy/data2:/d"] },
      sealed: []
    },
    {
      name: "a named volume under a bind's target is not a bind source",
      services: { a: ["/copy:/src", "modules:/src/node_modules"] },
      sealed: []
    }
  ]
  for (const testCase of cases) {
    it(testCase.name, () => {
      const input = project(testCase.services)
      const result = sealNestedBinds(input)
      assert.deepStrictEqual(result.sealed, testCase.sealed)
      assert.deepStrictEqual(result.project, testCase.expect === undefined ? input : project(testCase.expect))
    })
  }
})

describe("composeWorkspaceFolder", () => {
  const root = "/copy/repository"
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<unknown>, string]> = [
    ["devcontainer.json's own folder wins", "/work", [`${root}:/workspace`], "/work"],
    ["the app's bind of the repository root, short syntax", "/", [`${root}:/workspace:rw`], "/workspace"],
    ["the same in the long syntax", "/", [{ type: "bind", source: root, target: "/src" }], "/src"],
    ["a bind of a folder inside the repository is not the root", "/", [`${root}/app:/app`], "/workspaces/name"],
    ["a named volume is not the root", "/", ["data:/workspace"], "/workspaces/name"],
    ["the root bound at / is not a workspace", "/", [`${root}:/`], "/workspaces/name"]
  ]
  for (const [name, asked, volumes, expected] of cases) {
    it(name, () => assert.strictEqual(composeWorkspaceFolder(asked, { volumes }, root, "name"), expected))
  }
})
