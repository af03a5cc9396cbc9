import { assert, describe, it } from "@effect/vitest"
import { type FeatureNode, installOrder } from "../../src/index.ts"

const node = (key: string, more: Partial<FeatureNode> = {}): FeatureNode => ({
  key,
  resource: key,
  aliases: [],
  dependsOn: [],
  installsAfter: [],
  ...more
})

// nodes, override, expected order (or "cycle")
const cases: ReadonlyArray<
  readonly [string, ReadonlyArray<FeatureNode>, ReadonlyArray<string>, ReadonlyArray<string> | "cycle"]
> = [
  [
    "no dependencies: sorted by id",
    [node("r/node"), node("r/common"), node("r/go")],
    [],
    ["r/common", "r/go", "r/node"]
  ],
  ["dependsOn first", [node("r/a", { dependsOn: ["r/z"] }), node("r/z")], [], ["r/z", "r/a"]],
  ["installsAfter a feature in the set", [node("r/a", { installsAfter: ["r/b"] }), node("r/b")], [], ["r/b", "r/a"]],
  [
    "installsAfter a feature not in the set holds nothing back",
    [node("r/b", { installsAfter: ["r/x"] }), node("r/a")],
    [],
    ["r/a", "r/b"]
  ],
  [
    "installsAfter through a legacy id",
    [node("r/a", { installsAfter: ["r/old"] }), node("r/new", { aliases: ["r/old"] })],
    [],
    ["r/new", "r/a"]
  ],
  ["override puts a feature first", [node("r/a"), node("r/b"), node("r/c")], ["r/c", "r/b"], ["r/c", "r/b", "r/a"]],
  ["override cannot break dependsOn", [node("r/a", { dependsOn: ["r/b"] }), node("r/b")], ["r/a"], ["r/b", "r/a"]],
  ["a cycle is an error", [node("r/a", { dependsOn: ["r/b"] }), node("r/b", { dependsOn: ["r/a"] })], [], "cycle"],
  ["a dependency missing from the set is an error", [node("r/a", { dependsOn: ["r/missing"] })], [], "cycle"]
]

describe("installOrder (the spec's rounds)", () => {
  for (const [name, nodes, override, expected] of cases) {
    it(name, () => {
      const result = installOrder(nodes, override)
      if (expected === "cycle") assert.isFalse(result.ok)
      else assert.deepStrictEqual(result.ok ? result.order : result.remaining, expected)
    })
  }
})
