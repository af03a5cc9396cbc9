import { assert, describe, it } from "@effect/vitest"
import type { PullRequestLookup } from "@prbox/domain"
import { pushDestination, remoteHostName } from "../src/sandbox/PushDestination.ts"

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
          pushDestination({ provider: "github", remoteUrl: "git@H:o/r.git" }, undefined, known(FORK, true))
        ),
        "To",
        `"url":"${FORK}"`
      ],
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

  it("a remote's host name: a URL's or scp-like ssh's, without its user or port; none for a path", () => {
    const table: ReadonlyArray<[string, string | undefined]> = [
      ["https://GitHub.com/o/r.git", "github.com"],
      ["https://user@gitlab.example.com:8443/g/r.git", "gitlab.example.com"],
      ["ssh://git@host:2222/o/r.git", "host"],
      ["git@github.com:o/r.git", "github.com"],
      ["host:o/r.git", "host"],
      ["https://[::1]:8443/o/r.git", "[::1]"],
      ["/srv/r.git", undefined],
      ["file:///srv/r.git", undefined],
      ["./r.git", undefined]
    ]
    for (const [remote, host] of table) assert.strictEqual(remoteHostName(remote), host, remote)
  })
})
