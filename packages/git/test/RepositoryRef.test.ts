import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { type ParseOptions, parsePrebuildTarget, repositoryHost } from "../src/index.ts"

interface Row {
  readonly input: string
  readonly options?: ParseOptions
  readonly expect: Record<string, unknown> | { readonly refused: string }
}

const rows: ReadonlyArray<Row> = [
  {
    input: "https://github.com/o/r",
    expect: {
      _tag: "Repository",
      provider: "github",
      host: "github.com",
      repository: "o/r",
      remoteUrl: "https://github.com/o/r"
    }
  },
  {
    input: "  git@gitlab.example.com:g/sub/r.git ",
    expect: { _tag: "Repository", provider: "git", host: "gitlab.example.com", repository: "g/sub/r" }
  },
  {
    input: "https://gitlab.com/g/sub/r.git",
    expect: { _tag: "Repository", provider: "gitlab", repository: "g/sub/r" }
  },
  {
    input: "/srv/git/app.git",
    expect: { _tag: "Repository", provider: "git", host: "local", repository: "/srv/git/app.git" }
  },
  // git reads owner/repo as a path; only owner/repo#N is a pull request.
  { input: "o/r", expect: { _tag: "Repository", host: "local" } },
  {
    input: "codecommit::eu-west-1://app",
    options: { profile: "dev" },
    expect: { _tag: "Repository", provider: "codecommit", remoteUrl: "codecommit::eu-west-1://dev@app", profile: "dev" }
  },
  { input: "o/r#5", expect: { _tag: "PullRequest", repository: "o/r", pullRequest: 5 } },
  { input: "https://github.com/o/r/pull/12/files", expect: { _tag: "PullRequest", pullRequest: 12 } },
  { input: "/srv/git/app.git", options: { pr: 7 }, expect: { _tag: "PullRequest", pullRequest: 7 } },
  { input: "/srv/git/app.git", options: { ref: "feature" }, expect: { refused: "--ref names a pull request's head" } },
  { input: "https://github.com/o/r/pull/3", options: { pr: 4 }, expect: { refused: "disagrees" } },
  { input: "https://tok@github.com/o/r", expect: { refused: "credentials in the URL are not accepted" } },
  { input: "--upload-pack=evil", expect: { refused: "looks like a command-line option" } },
  { input: "", expect: { refused: "nothing to open" } },
  { input: "ext::sh -c evil", expect: { refused: "remote-helper transports" } },
  { input: "/srv/git/app.git", options: { profile: "bad profile" }, expect: { refused: "invalid profile name" } }
]

describe("parsePrebuildTarget", () => {
  for (const { input, options, expect } of rows) {
    it(`${JSON.stringify(input)} ${JSON.stringify(options ?? {})}`, () => {
      const parsed = parsePrebuildTarget(input, options)
      if ("refused" in expect) {
        assert.isTrue(Result.isFailure(parsed), "refused")
        if (Result.isFailure(parsed)) {
          assert.include(parsed.failure.reason, String(expect.refused))
          assert.notInclude(parsed.failure.message, "tok@", "no credential in the refusal")
        }
        return
      }
      if (Result.isFailure(parsed)) return assert.fail(parsed.failure.message)
      const got = parsed.success
      const flat = { _tag: got._tag, ...(got._tag === "Repository" ? got.repository : got.target) }
      for (const [key, value] of Object.entries(expect))
        assert.deepStrictEqual((flat as Record<string, unknown>)[key], value, key)
    })
  }
})

describe("repositoryHost: a repository URL's host, spelled as a PR's host is", () => {
  it("drops case, the default port and www.; keeps another port; none for a path or what is no remote", () => {
    const table: ReadonlyArray<[string, string | undefined]> = [
      ["https://GitHub.com/o/r.git", "github.com"],
      ["https://www.github.com/o/r", "github.com"],
      ["https://gitlab.example.com:443/g/r.git", "gitlab.example.com"],
      ["https://gitlab.example.com:8443/g/r.git", "gitlab.example.com:8443"],
      ["ssh://git@host/o/r.git", "host"],
      ["git@github.com:o/r.git", "github.com"],
      ["https://user@h.evil.example/fork/r.git", undefined],
      ["/srv/r.git", undefined],
      ["file:///srv/r.git", undefined],
      ["", undefined]
    ]
    for (const [url, host] of table) assert.strictEqual(repositoryHost(url), host, url)
  })
})
