import { describe, expect, it } from "@effect/vitest"
import { type PoolEntry, planPoolGc, poolShortfall, SandboxId } from "../src/index.ts"

const entry = (id: string, over: Partial<PoolEntry> = {}): PoolEntry => ({
  id: SandboxId.make(id.padEnd(12, "0")),
  key: "k1",
  prebuildId: "pb1",
  baseCommit: "b".repeat(40),
  host: "github.com",
  repository: "o/r",
  state: "ready",
  containerId: `c-${id}`,
  hostPort: 40000,
  workspacePath: `/w/${id}`,
  createdAt: 0,
  ...over
})

const MINUTE = 60_000

describe("poolShortfall", () => {
  it.each([
    { name: "an empty pool of size 2", entries: [], size: 2, want: 2 },
    { name: "one waiting of 2", entries: [entry("a")], size: 2, want: 1 },
    { name: "full", entries: [entry("a"), entry("b")], size: 2, want: 0 },
    { name: "over", entries: [entry("a"), entry("b"), entry("c")], size: 2, want: 0 },
    { name: "another key's do not count", entries: [entry("a", { key: "k2" })], size: 1, want: 1 },
    { name: "one being made: nothing more meanwhile", entries: [entry("a", { state: "making" })], size: 3, want: 0 },
    { name: "size 0", entries: [], size: 0, want: 0 }
  ])("$name", ({ entries, size, want }) => {
    expect(poolShortfall(entries, "k1", size)).toBe(want)
  })
})

describe("planPoolGc", () => {
  const pool = { size: 1, idleMinutes: 30 }
  it.each([
    { name: "fresh: kept", entries: [entry("a")], now: 29 * MINUTE, want: [] },
    { name: "idle past idleMinutes: removed", entries: [entry("a")], now: 30 * MINUTE, want: ["a"] },
    {
      name: "being made: kept however old",
      entries: [entry("a", { state: "making" })],
      now: 90 * MINUTE,
      want: []
    }
  ])("$name", ({ entries, now, want }) => {
    expect(planPoolGc(entries, now, pool).map((e) => e.id)).toEqual(want.map((id) => id.padEnd(12, "0")))
  })
  it("size 0: every ready entry goes at once", () => {
    const entries = [entry("a"), entry("b", { state: "making" })]
    expect(planPoolGc(entries, 0, { size: 0, idleMinutes: 30 }).map((e) => e.id)).toEqual([entries[0]?.id])
  })
})
