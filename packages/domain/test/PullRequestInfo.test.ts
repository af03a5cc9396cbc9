import { describe, expect, it } from "@effect/vitest"
import { sameCommit } from "../src/PullRequestInfo.ts"

const full = "0123456789abcdef0123456789abcdef01234567"

describe("sameCommit", () => {
  it.each([
    { service: full, fetched: full, same: true, why: "the full hash" },
    { service: full.toUpperCase(), fetched: full, same: true, why: "case does not matter" },
    { service: full.slice(0, 12), fetched: full, same: true, why: "Bitbucket's 12 characters, as a prefix" },
    { service: "0123456789ab", fetched: `f${full.slice(1)}`, same: false, why: "a prefix of another commit" },
    { service: full.slice(0, 6), fetched: full, same: false, why: "too short to name a commit" },
    { service: "", fetched: full, same: false, why: "nothing reported" },
    { service: "main", fetched: full, same: false, why: "not a hash" },
    { service: full, fetched: full.slice(0, 12), same: false, why: "the fetched commit must be full" }
  ])("$why → $same", ({ service, fetched, same }) => {
    expect(sameCommit(service, fetched)).toBe(same)
  })
})
