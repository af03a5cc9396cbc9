import { describe, expect, it } from "vitest"
import { age, repoOf } from "../src/index.ts"

describe("age", () => {
  const now = 1_000_000_000
  const cases: ReadonlyArray<readonly [ms: number, expected: string]> = [
    [0, "0s"],
    [59_999, "59s"],
    [60_000, "1m"],
    [3_599_999, "59m"],
    [3_600_000, "1h"],
    [86_399_999, "23h"],
    [86_400_000, "1d"],
    [10 * 86_400_000, "10d"],
    // A clock that went backwards is "now", never negative.
    [-5_000, "0s"]
  ]
  for (const [ms, expected] of cases) {
    it(`${ms} ms → ${expected}`, () => expect(age(now - ms, now)).toBe(expected))
  }
})

describe("repoOf: the repository as a user types it", () => {
  const cases: ReadonlyArray<readonly [host: string | null, repository: string, expected: string]> = [
    ["github.com", "owner/repo", "owner/repo"],
    [null, "owner/repo", "owner/repo"],
    ["gitlab.example.com", "group/sub/app", "gitlab.example.com/group/sub/app"],
    ["eu-west-1", "my-repo", "eu-west-1/my-repo"],
    ["local", "/tmp/x/remote.git", "remote"],
    ["local", "/srv/git/plain", "plain"],
    ["local", "/", "/"]
  ]
  for (const [host, repository, expected] of cases) {
    it(`${host ?? "(no host)"} ${repository} → ${expected}`, () => expect(repoOf({ host, repository })).toBe(expected))
  }
})
