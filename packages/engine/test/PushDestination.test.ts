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
    const github = { provider: "github" as const, host: "h", remoteUrl: BASE }
    const plain = { provider: "git" as const, host: "local", remoteUrl: "/srv/r.git" }
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
      // A service at a host a link named may name anyone's repository: only the PR's own host is pushed to.
      [
        JSON.stringify(pushDestination(github, undefined, known("https://github.com/victim/repo.git", true))),
        "Nowhere",
        "another host than the PR's (h)"
      ],
      [
        JSON.stringify(pushDestination(github, undefined, known("https://user@h.evil.example/fork/r.git", true))),
        "Nowhere",
        "another host"
      ],
      [
        JSON.stringify(
          pushDestination({ provider: "github", host: "h", remoteUrl: "git@h:o/r.git" }, undefined, known(FORK, true))
        ),
        "To",
        `"url":"${FORK}"`
      ],
      // The fork's host as the PR's is spelled (case, default port); a row with no host follows none.
      [
        JSON.stringify(pushDestination(github, undefined, known("https://H:443/fork/r.git", true))),
        "To",
        '"url":"https://H:443/fork/r.git"'
      ],
      [
        JSON.stringify(pushDestination({ ...github, host: null }, undefined, known(FORK, true))),
        "Nowhere",
        "another host than the PR's (none)"
      ],
      [
        JSON.stringify(pushDestination({ provider: "github", host: "h", remoteUrl: null }, "x", undefined)),
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
