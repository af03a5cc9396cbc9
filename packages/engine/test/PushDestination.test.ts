import { assert, describe, it } from "@effect/vitest"
import type { PullRequestLookup } from "@prbox/domain"
import { pushDestination } from "../src/sandbox/PushDestination.ts"

const known = (
  sourceCloneUrl: string | null,
  maintainerCanModify: boolean | null = null,
  sourceBranch = "fix"
): PullRequestLookup => ({
  _tag: "Known",
  info: {
    title: "t",
    author: "a",
    state: "open",
    sourceBranch,
    sourceCloneUrl,
    maintainerCanModify,
    baseRef: "main",
    headSha: "0".repeat(40)
  }
})

const BASE = "https://h/o/r.git"
const FORK = "https://h/fork/r.git"

describe("where prbox push sends a sandbox's commits", () => {
  it("follows --to, the service's source repository and branch, and refuses what it cannot trust", () => {
    const github = { provider: "github" as const, remoteUrl: BASE }
    const plain = { provider: "git" as const, remoteUrl: "/srv/r.git" }
    const table: ReadonlyArray<[string, ReturnType<typeof pushDestination>["_tag"], string]> = [
      [JSON.stringify(pushDestination(plain, "feature", undefined)), "To", '"url":"/srv/r.git","branch":"feature"'],
      [JSON.stringify(pushDestination(plain, undefined, undefined)), "Nowhere", "--to <branch>"],
      [JSON.stringify(pushDestination(plain, "--upload-pack=x", undefined)), "Nowhere", "not a branch name"],
      [JSON.stringify(pushDestination(github, undefined, known(null))), "To", `"url":"${BASE}","branch":"fix"`],
      [JSON.stringify(pushDestination(github, undefined, known(FORK, true))), "To", `"url":"${FORK}","branch":"fix"`],
      [JSON.stringify(pushDestination(github, undefined, known(FORK, null))), "To", `"url":"${FORK}"`],
      [JSON.stringify(pushDestination(github, undefined, known(FORK, false))), "Nowhere", "does not let maintainers"],
      [JSON.stringify(pushDestination(github, undefined, known("git@h:fork/r.git", true))), "Nowhere", "https"],
      [JSON.stringify(pushDestination(github, undefined, known(null, null, "a..b"))), "Nowhere", "source branch"],
      [
        JSON.stringify(pushDestination(github, undefined, { _tag: "Unknown", reason: "no token" })),
        "Nowhere",
        "no token"
      ],
      [JSON.stringify(pushDestination(github, "other", known(FORK, false))), "To", `"url":"${BASE}","branch":"other"`],
      [
        JSON.stringify(pushDestination({ provider: "github", remoteUrl: null }, "x", undefined)),
        "Nowhere",
        "open the PR again"
      ]
    ]
    for (const [answer, tag, part] of table) {
      assert.include(answer, `"_tag":"${tag}"`, answer)
      assert.include(answer, part, answer)
    }
  })
})
