import { assert, describe, it } from "@effect/vitest"
import type { Prebuild } from "@prbox/domain"
import { type PrebuildGcPolicy, planPrebuildGc } from "../src/prebuild/PrebuildGc.ts"

const DAY = 86_400_000
const NOW = 100 * DAY
const GIB = 1024 ** 3
const policy: PrebuildGcPolicy = { maxBytes: 10 * GIB, keepMs: 7 * DAY }

const row = (id: string, overrides: Partial<Prebuild> = {}): Prebuild => ({
  id,
  key: id,
  host: "localhost",
  repository: "acme/widgets",
  baseBranch: "main",
  baseCommit: "a".repeat(40),
  image: null,
  volume: `v-${id}`,
  sizeBytes: GIB,
  state: "ready",
  error: null,
  startedAt: NOW - DAY,
  readyAt: NOW - DAY,
  usedAt: null,
  ...overrides
})

describe("planPrebuildGc", () => {
  const table: ReadonlyArray<
    readonly [
      string,
      ReadonlyArray<Prebuild>,
      ReadonlyArray<string>,
      PrebuildGcPolicy | undefined,
      ReadonlyArray<string>
    ]
  > = [
    ["a fresh one under the cap is kept", [row("p1")], [], policy, []],
    ["unused past keepDays: removed", [row("p1", { readyAt: NOW - 8 * DAY })], [], policy, ["p1"]],
    [
      "used recently though made long ago: kept",
      [row("p1", { readyAt: NOW - 30 * DAY, usedAt: NOW - DAY })],
      [],
      policy,
      []
    ],
    ["expired but in use: never removed", [row("p1", { readyAt: NOW - 8 * DAY })], ["p1"], policy, []],
    [
      "being made, however old: never removed (reconcile ends a crashed one)",
      [row("p1", { state: "making", readyAt: null, startedAt: NOW - 30 * DAY })],
      [],
      policy,
      []
    ],
    [
      "replaced by a newer ready one of its key: removed",
      [row("old", { key: "k", readyAt: NOW - 2 * DAY }), row("new", { key: "k" })],
      [],
      policy,
      ["old"]
    ],
    [
      "over the cap: least recently used first, until it fits",
      [
        row("a", { sizeBytes: 5 * GIB, usedAt: NOW - 3 * DAY }),
        row("b", { sizeBytes: 5 * GIB, usedAt: NOW - 1 * DAY }),
        row("c", { sizeBytes: 5 * GIB, usedAt: NOW - 2 * DAY })
      ],
      [],
      policy,
      ["a"]
    ],
    [
      "over the cap with the oldest in use: the next oldest goes",
      [
        row("a", { sizeBytes: 5 * GIB, usedAt: NOW - 3 * DAY }),
        row("b", { sizeBytes: 5 * GIB, usedAt: NOW - 1 * DAY }),
        row("c", { sizeBytes: 5 * GIB, usedAt: NOW - 2 * DAY })
      ],
      ["a"],
      policy,
      ["c"]
    ],
    [
      "a failed one past keepDays: removed; a recent failed one kept (it stops retries of its commit)",
      [
        row("f1", { state: "failed", readyAt: null, startedAt: NOW - 8 * DAY }),
        row("f2", { state: "failed", readyAt: null })
      ],
      [],
      policy,
      ["f1"]
    ],
    [
      "prebuilds off: every one not in use and not being made",
      [row("a"), row("b"), row("m", { state: "making", readyAt: null })],
      ["b"],
      undefined,
      ["a"]
    ]
  ]
  for (const [name, rows, inUse, given, removed] of table) {
    it(name, () => {
      assert.deepStrictEqual(
        planPrebuildGc(rows, new Set(inUse), NOW, given).map((removal) => removal.id),
        removed
      )
    })
  }
})
