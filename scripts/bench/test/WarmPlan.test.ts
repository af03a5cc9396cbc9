import { describe, expect, it } from "vitest"
import {
  distribution,
  judge,
  openedId,
  type PullRequestCandidate,
  planPullRequests,
  poolRefilled,
  statsMemoryMb
} from "../warm-plan.ts"

const pr = (number: number, fields: Partial<PullRequestCandidate> = {}): PullRequestCandidate => ({
  number,
  ahead: 1,
  behind: 2,
  ownEnvironment: false,
  changedFile: "lib/app.js",
  ...fields
})

describe("planPullRequests", () => {
  it.each([
    {
      name: "the newest PRs near the base, newest first",
      candidates: [pr(7), pr(9), pr(8)],
      count: 2,
      highest: 9,
      use: [9, 8],
      make: []
    },
    {
      name: "a PR with its own devcontainer is another environment: left out",
      candidates: [pr(9, { ownEnvironment: true }), pr(8)],
      count: 1,
      highest: 9,
      use: [8],
      make: []
    },
    {
      name: "far behind or far ahead of the base, or only deleting files: left out",
      candidates: [pr(9, { behind: 201 }), pr(8, { ahead: 11 }), pr(7, { changedFile: null }), pr(6, { ahead: 0 })],
      count: 1,
      highest: 9,
      use: [],
      make: [10]
    },
    {
      name: "too few: the rest made past the highest PR number the repository has",
      candidates: [pr(5)],
      count: 3,
      highest: 1200,
      use: [5],
      make: [1201, 1202]
    },
    { name: "none at all: all made from 1", candidates: [], count: 2, highest: 0, use: [], make: [1, 2] }
  ])("$name", ({ candidates, count, highest, use, make }) => {
    expect(planPullRequests(candidates, count, highest)).toEqual({ use, make })
  })
})

describe("distribution and judge", () => {
  it("nearest-rank p50 and p95: of 10 samples p95 is the largest", () => {
    const d = distribution([10, 1, 9, 2, 8, 3, 7, 4, 6, 5])
    expect(d).toEqual({ p50: 5, p95: 10, min: 1, max: 10, n: 10 })
  })

  it.each([
    { scenario: "poolHit" as const, prbox: [400, 500, 450], raw: [900, 1000, 950], met: true, ratio: 450 / 950 },
    { scenario: "poolHit" as const, prbox: [500, 600, 550], raw: [900, 1000, 950], met: false, ratio: 550 / 950 },
    { scenario: "poolMiss" as const, prbox: [950, 900, 1000], raw: [900, 1000, 950], met: true, ratio: 1 },
    { scenario: "prebuilt" as const, prbox: [1200, 1050, 1100], raw: [900, 1000, 950], met: true, ratio: 1100 / 950 },
    { scenario: "prebuilt" as const, prbox: [1200, 1150, 1180], raw: [900, 1000, 950], met: false, ratio: 1180 / 950 },
    { scenario: "prebuilt" as const, prbox: [31_000, 1050, 1100], raw: [900, 1000, 950], met: true, ratio: 1100 / 950 },
    {
      scenario: "prebuilt" as const,
      prbox: [31_000, 31_100, 1150],
      raw: [900, 1000, 950],
      met: false,
      ratio: 31_000 / 950
    }
  ])("$scenario p50 $prbox against raw $raw: met $met", ({ scenario, prbox, raw, met, ratio }) => {
    const judged = judge(scenario, { prboxMs: prbox, rawMs: raw })
    expect(judged.met).toBe(met)
    expect(judged.ratio).toBeCloseTo(ratio, 6)
  })

  it("no samples, or unpaired ones, never meet a target", () => {
    expect(judge("poolMiss", { prboxMs: [], rawMs: [] }).met).toBe(false)
    expect(judge("poolMiss", { prboxMs: [1, 1], rawMs: [10] }).met).toBe(false)
  })

  it("the paired ratio is the median of each pair's", () => {
    expect(judge("poolHit", { prboxMs: [100, 300, 200], rawMs: [1000, 1000, 100] }).pairedRatio).toBeCloseTo(0.3, 6)
  })
})

describe("poolRefilled", () => {
  it.each([
    { entries: ["ready", "ready"], size: 2, refilled: true },
    { entries: ["ready", "making"], size: 2, refilled: false },
    { entries: ["ready", "ready", "making"], size: 2, refilled: false },
    { entries: ["ready"], size: 2, refilled: false },
    { entries: [], size: 0, refilled: true }
  ])("$entries of size $size: $refilled", ({ entries, size, refilled }) => {
    expect(
      poolRefilled(
        entries.map((state) => ({ state })),
        size
      )
    ).toBe(refilled)
  })
})

describe("statsMemoryMb", () => {
  it.each([
    { usage: "123.5MiB / 7.63GiB", mb: 123.5 },
    { usage: "1.5GiB / 7.63GiB", mb: 1536 },
    { usage: "512KiB / 7.63GiB", mb: 0.5 }
  ])("$usage", ({ usage, mb }) => {
    expect(statsMemoryMb(usage)).toBeCloseTo(mb, 6)
  })

  it("reads anything else as NaN", () => {
    expect(statsMemoryMb("--")).toBeNaN()
  })
})

describe("openedId", () => {
  it("reads the view's id from --json, pretty-printed or not", () => {
    expect(openedId('{\n  "id": "k3v9ab",\n  "status": "running"\n}\n')).toBe("k3v9ab")
    expect(openedId('{"id":"k3v9ab"}')).toBe("k3v9ab")
  })

  it("reads the human line's id", () => {
    expect(openedId("sandbox k3v9ab is running: http://127.0.0.1:1234/\npassword: …")).toBe("k3v9ab")
  })

  it("says what it printed when there is no id", () => {
    expect(() => openedId("nothing here")).toThrow(/printed no sandbox id: nothing here/)
  })
})
