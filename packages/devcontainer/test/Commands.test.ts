import { assert, describe, it } from "@effect/vitest"
import type { LifecycleCommand } from "@prbox/domain"
import { type RawLifecycleCommand, toLifecycleCommand } from "../src/index.ts"

const rows: ReadonlyArray<readonly [string, RawLifecycleCommand, LifecycleCommand]> = [
  ["a string runs through the shell", "npm ci && npm run build", { _tag: "Shell", command: "npm ci && npm run build" }],
  [
    "an array is executed directly",
    ["pip", "install", "-e", "."],
    { _tag: "Exec", argv: ["pip", "install", "-e", "."] }
  ],
  [
    "an object's entries run in parallel, each in its own form",
    { deps: "npm ci", db: ["./scripts/db.sh", "--seed"] },
    {
      _tag: "Parallel",
      entries: [
        { name: "deps", command: { _tag: "Shell", command: "npm ci" } },
        { name: "db", command: { _tag: "Exec", argv: ["./scripts/db.sh", "--seed"] } }
      ]
    }
  ],
  ["an empty object has nothing to run", {}, { _tag: "Parallel", entries: [] }]
]

describe("toLifecycleCommand", () => {
  for (const [name, raw, expected] of rows) {
    it(name, () => assert.deepStrictEqual(toLifecycleCommand(raw), expected))
  }
})
