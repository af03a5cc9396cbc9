import { assert, describe, it } from "@effect/vitest"
import type { Prebuild } from "@prbox/domain"
import {
  type Background,
  decideMakeNow,
  decidePrebuild,
  type MakeNow,
  type OpenPath,
  type PrebuildFacts
} from "../src/prebuild/PrebuildDecision.ts"

const HOUR = 60 * 60_000
const NOW = 100 * HOUR
const A = "a".repeat(40)
const B = "b".repeat(40)

const row = (id: string, overrides: Partial<Prebuild> = {}): Prebuild => ({
  id,
  key: "k",
  host: "localhost",
  repository: "acme/widgets",
  baseBranch: "main",
  baseCommit: A,
  image: `prbox-prebuild/k:${id}`,
  volume: `prbox-prebuild-${id}`,
  sizeBytes: 1,
  state: "ready",
  error: null,
  startedAt: NOW - 2 * HOUR,
  readyAt: NOW - 2 * HOUR + 1,
  usedAt: null,
  ...overrides
})

const facts = (overrides: Partial<PrebuildFacts> = {}): PrebuildFacts => ({
  enabled: true,
  prKey: "k",
  baseKey: "k",
  baseCommit: A,
  rows: [],
  now: NOW,
  ...overrides
})

const openTag = (path: OpenPath) => (path._tag === "Prebuild" ? `Prebuild ${path.prebuild.id}` : path._tag)
const backgroundTag = (b: Background) => (b._tag === "Refresh" ? `Refresh ${b.replaces}` : b._tag)

describe("decidePrebuild", () => {
  const table: ReadonlyArray<readonly [string, Partial<PrebuildFacts>, string, string]> = [
    ["prebuilds off: today's path and nothing made", { enabled: false, rows: [row("p1")] }, "Off", "Nothing"],
    ["no prebuild yet: the full path, and one is made", {}, "Full", "Make"],
    ["a ready one of the PR's key at the base: used, nothing made", { rows: [row("p1")] }, "Prebuild p1", "Nothing"],
    [
      "the newest ready one of the key is used",
      { rows: [row("p1", { readyAt: NOW - 3 * HOUR }), row("p2", { readyAt: NOW - HOUR })] },
      "Prebuild p2",
      "Nothing"
    ],
    [
      "a PR that changes its environment: the full path; the base's is kept",
      { prKey: "other", rows: [row("p1")] },
      "Full",
      "Nothing"
    ],
    [
      "an unkeyable PR (Compose): the full path",
      { prKey: { unkeyable: "compose" }, baseKey: { unkeyable: "compose" } },
      "Full",
      "Nothing"
    ],
    [
      "the base moved over an hour after the last build: used, and refreshed",
      { baseCommit: B, rows: [row("p1")] },
      "Prebuild p1",
      "Refresh p1"
    ],
    [
      "the base moved less than an hour after the last build: used, not refreshed",
      { baseCommit: B, rows: [row("p1", { startedAt: NOW - HOUR + 1 })] },
      "Prebuild p1",
      "Nothing"
    ],
    [
      "exactly an hour: refreshed",
      { baseCommit: B, rows: [row("p1", { startedAt: NOW - HOUR })] },
      "Prebuild p1",
      "Refresh p1"
    ],
    [
      "one of the repository is being made: nothing more, the ready one used",
      { baseCommit: B, rows: [row("p1"), row("p2", { state: "making", startedAt: NOW - 3 * HOUR, readyAt: null })] },
      "Prebuild p1",
      "Nothing"
    ],
    [
      "a making one is never used (whatever its times say)",
      { rows: [row("p2", { state: "making" })] },
      "Full",
      "Nothing"
    ],
    [
      "a failed build of the base's commit is not tried again",
      { rows: [row("p1", { state: "failed", readyAt: null })] },
      "Full",
      "Nothing"
    ],
    [
      "a failed build of an old commit, over an hour ago: tried again on the new base",
      { baseCommit: B, rows: [row("p1", { state: "failed", readyAt: null })] },
      "Full",
      "Make"
    ],
    [
      "a failed refresh of the base's commit keeps the older ready one in use, no retry",
      {
        baseCommit: B,
        rows: [row("p1"), row("p2", { state: "failed", baseCommit: B, startedAt: NOW - HOUR / 2, readyAt: null })]
      },
      "Prebuild p1",
      "Nothing"
    ],
    [
      "the PR's key differs from the base's, which has none: nothing made from this PR's environment",
      { prKey: "other" },
      "Full",
      "Nothing"
    ],
    ["the PR's key is the base's, which has none: the base's is made", { prKey: "k", baseKey: "k" }, "Full", "Make"]
  ]
  for (const [name, input, open, made] of table) {
    it(name, () => {
      const decided = decidePrebuild(facts(input))
      assert.strictEqual(openTag(decided.open), open)
      assert.strictEqual(backgroundTag(decided.background), made)
    })
  }
})

const nowTag = (decision: MakeNow) =>
  decision._tag === "Make"
    ? "Make"
    : decision._tag === "Refresh"
      ? `Refresh ${decision.replaces.id}`
      : `${decision._tag} ${decision.prebuild.id}`

describe("decideMakeNow (prbox prebuild)", () => {
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<Prebuild>, string]> = [
    ["none yet: made", [], "Make"],
    ["a ready one of the key at the base's commit: up to date", [row("r")], "UpToDate r"],
    ["the newest ready one decides", [row("old", { readyAt: 1, baseCommit: B }), row("r")], "UpToDate r"],
    ["the base moved: refreshed", [row("r", { baseCommit: B })], "Refresh r"],
    ["another key's ready one at the commit is not this one", [row("r", { key: "other" })], "Make"],
    ["one of the repository being made: answered so", [row("r"), row("m", { state: "making" })], "BeingMade m"],
    ["a failed one at the commit is tried again", [row("f", { state: "failed", readyAt: null })], "Make"]
  ]
  for (const [name, rows, expected] of cases) {
    it(name, () => assert.strictEqual(nowTag(decideMakeNow(rows, "k", A)), expected))
  }
})
