import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import {
  isHeadFromService,
  type ParseOptions,
  type PullRequestAtService,
  parsePullRequestRef,
  parsePullRequestTarget,
  withSourceBranch
} from "../src/index.ts"

interface Accepted {
  readonly input: string
  readonly options?: ParseOptions
  readonly expect: Record<string, unknown>
}

const accepted: ReadonlyArray<Accepted> = [
  {
    input: "https://github.com/o/r/pull/12",
    expect: {
      provider: "github",
      host: "github.com",
      repository: "o/r",
      pullRequest: 12,
      remoteUrl: "https://github.com/o/r.git",
      headRef: "refs/pull/12/head",
      webUrl: "https://github.com/o/r/pull/12"
    }
  },
  {
    input: "  https://www.github.com/o/r.js/pull/3/files?diff=split#r1  ",
    expect: { host: "github.com", repository: "o/r.js", pullRequest: 3, remoteUrl: "https://github.com/o/r.js.git" }
  },
  {
    input: "https://ghe.example.com:8443/team/app/pull/7",
    expect: {
      provider: "github",
      host: "ghe.example.com:8443",
      repository: "team/app",
      remoteUrl: "https://ghe.example.com:8443/team/app.git",
      headRef: "refs/pull/7/head"
    }
  },
  {
    input: "o/r#5",
    expect: { provider: "github", host: "github.com", repository: "o/r", pullRequest: 5, headRef: "refs/pull/5/head" }
  },
  {
    input: "https://gitlab.example.com/g/sub/r/-/merge_requests/42/diffs",
    expect: {
      provider: "gitlab",
      host: "gitlab.example.com",
      repository: "g/sub/r",
      pullRequest: 42,
      remoteUrl: "https://gitlab.example.com/g/sub/r.git",
      headRef: "refs/merge-requests/42/head",
      webUrl: "https://gitlab.example.com/g/sub/r/-/merge_requests/42"
    }
  },
  {
    input: "https://bitbucket.org/w/r/pull-requests/9",
    options: { ref: "feature/x" },
    expect: {
      provider: "bitbucket",
      host: "bitbucket.org",
      repository: "w/r",
      remoteUrl: "https://bitbucket.org/w/r.git",
      headRef: "refs/heads/feature/x"
    }
  },
  {
    input: "https://git.example.com/projects/PRJ/repos/app/pull-requests/4/overview",
    expect: {
      provider: "bitbucket",
      host: "git.example.com",
      repository: "PRJ/app",
      remoteUrl: "https://git.example.com/scm/prj/app.git",
      headRef: "refs/pull-requests/4/from"
    }
  },
  {
    input:
      "https://eu-west-1.console.aws.amazon.com/codesuite/codecommit/repositories/svc/pull-requests/8/details?region=eu-west-1",
    options: { ref: "feature", profile: "work" },
    expect: {
      provider: "codecommit",
      host: "eu-west-1",
      repository: "svc",
      pullRequest: 8,
      remoteUrl: "codecommit::eu-west-1://work@svc",
      headRef: "refs/heads/feature",
      profile: "work"
    }
  },
  {
    input: "https://console.aws.amazon.com/codesuite/codecommit/repositories/svc/pull-requests/8?region=us-east-2",
    options: { ref: "refs/heads/feature" },
    expect: { host: "us-east-2", remoteUrl: "codecommit::us-east-2://svc", headRef: "refs/heads/feature" }
  },
  {
    input: "codecommit::us-east-1://dev@svc",
    options: { pr: 2, ref: "topic" },
    expect: {
      provider: "codecommit",
      host: "us-east-1",
      repository: "svc",
      pullRequest: 2,
      remoteUrl: "codecommit::us-east-1://dev@svc",
      profile: "dev"
    }
  },
  {
    input: "git@github.com:o/r.git",
    options: { pr: 6 },
    expect: { provider: "github", repository: "o/r", remoteUrl: "git@github.com:o/r.git", headRef: "refs/pull/6/head" }
  },
  {
    input: "ssh://git@git.example.com:2222/srv/app.git",
    options: { pr: 1 },
    expect: {
      provider: "git",
      host: "git.example.com:2222",
      repository: "srv/app",
      remoteUrl: "ssh://git@git.example.com:2222/srv/app.git",
      headRef: "refs/pull/1/head"
    }
  },
  {
    input: "https://git.example.com/app.git",
    options: { pr: 3, refPattern: "refs/merge-requests/{n}/head" },
    expect: { provider: "git", host: "git.example.com", repository: "app", headRef: "refs/merge-requests/3/head" }
  },
  {
    input: "/srv/repos/app.git/",
    options: { pr: 4, ref: "refs/changes/04/4/1" },
    expect: {
      provider: "git",
      host: "local",
      repository: "/srv/repos/app.git",
      remoteUrl: "/srv/repos/app.git",
      headRef: "refs/changes/04/4/1"
    }
  },
  {
    input: "file:///srv/repos/app.git",
    options: { pr: 4 },
    expect: { host: "local", remoteUrl: "/srv/repos/app.git" }
  },
  {
    input: "https://github.com/o/r/pull/12",
    options: { pr: 12 },
    expect: { pullRequest: 12 }
  }
]

describe("parsePullRequestRef accepts", () => {
  it.each(accepted)("$input", ({ expect, input, options }) => {
    const result = parsePullRequestRef(input, options)
    assert.isTrue(Result.isSuccess(result), Result.isFailure(result) ? result.failure.message : "")
    const ref = Result.getOrThrow(result)
    for (const [key, value] of Object.entries(expect)) {
      assert.deepStrictEqual(ref[key as keyof typeof ref], value, key)
    }
  })

  it("makes a relative path absolute", () => {
    const ref = Result.getOrThrow(parsePullRequestRef("../repo", { pr: 1 }))
    assert.isTrue(ref.remoteUrl.startsWith("/"))
    assert.strictEqual(ref.host, "local")
  })
})

interface Refused {
  readonly input: string
  readonly options?: ParseOptions
  /** A fragment of the reason. */
  readonly reason: string
}

const refused: ReadonlyArray<Refused> = [
  { input: "", reason: "nothing to open" },
  { input: "https://github.com/o/r/pull/", reason: "missing or invalid pull request number" },
  { input: "https://github.com/o/r/pull/abc", reason: "missing or invalid pull request number" },
  { input: "https://github.com/o/r/pull/0", reason: "missing or invalid pull request number" },
  { input: "https://github.com/o/r/pull/-3", reason: "missing or invalid pull request number" },
  { input: "https://github.com/o/r/pulls", reason: "not a pull request URL" },
  { input: "https://gitlab.example.com/g/r/-/merge_requests/x", reason: "missing or invalid pull request number" },
  { input: "o/r#", reason: "positive whole number" },
  { input: "o/r#1e3", reason: "positive whole number" },
  { input: "https://example.com/some/page", reason: "--pr N" },
  { input: "/srv/app.git", reason: "--pr N" },
  { input: "https://example.com/a/b", options: { pr: 0 }, reason: "--pr must be a positive whole number" },
  { input: "https://example.com/a/b", options: { pr: -2 }, reason: "--pr must be a positive whole number" },
  { input: "https://example.com/a/b", options: { pr: 1.5 }, reason: "--pr must be a positive whole number" },
  { input: "https://example.com/a/b", options: { pr: Number.NaN }, reason: "--pr must be a positive whole number" },
  { input: "https://github.com/o/r/pull/1", options: { pr: 2 }, reason: "disagrees" },
  { input: "https://bitbucket.org/w/r/pull-requests/9", reason: "--ref <source branch>" },
  { input: "codecommit::us-east-1://svc", options: { pr: 1 }, reason: "--ref <source branch>" },
  { input: "codecommit://svc", options: { pr: 1, ref: "x" }, reason: "include the region" },
  { input: "codecommit::nowhere://svc", options: { pr: 1, ref: "x" }, reason: "not an AWS region" },
  { input: "codecommit::us-east-1://svc;rm", options: { pr: 1, ref: "x" }, reason: "invalid repository name" },
  { input: "ftp://example.com/r.git", options: { pr: 1 }, reason: "unsupported URL scheme" },
  // injection attempts
  { input: "--upload-pack=touch /tmp/pwned", options: { pr: 1 }, reason: "command-line option" },
  { input: "-oProxyCommand=x", options: { pr: 1 }, reason: "command-line option" },
  { input: "ext::sh -c touch% /tmp/pwned", options: { pr: 1 }, reason: "remote-helper transports" },
  { input: "fd::3", options: { pr: 1 }, reason: "remote-helper transports" },
  { input: "https://github.com/o/r/pull/1 --upload-pack=x", reason: "whitespace" },
  { input: "https://github.com/o/../../r/pull/1", reason: "'..' segments" },
  { input: "https://github.com/o/%2e%2e/pull/1", reason: "'..' segments" },
  { input: "host:-oProxyCommand=x", options: { pr: 1 }, reason: "cannot start with -" },
  { input: "ssh://-oProxyCommand=x@host/r.git", options: { pr: 1 }, reason: "invalid user name" },
  { input: "ssh://-oProxyCommand/r.git", options: { pr: 1 }, reason: "no valid host" },
  { input: "https://github.com/o/r\u0000/pull/1", reason: "control characters" },
  { input: "/srv/app.git", options: { pr: 1, ref: "refs/heads/../../x" }, reason: "--ref is not a valid ref" },
  { input: "/srv/app.git", options: { pr: 1, ref: "main@{1}" }, reason: "--ref is not a valid ref" },
  { input: "/srv/app.git", options: { pr: 1, ref: "a:b" }, reason: "--ref is not a valid ref" },
  { input: "/srv/app.git", options: { pr: 1, ref: "a b" }, reason: "--ref is not a valid ref" },
  { input: "/srv/app.git", options: { pr: 1, ref: "a\tb" }, reason: "--ref is not a valid ref" },
  { input: "/srv/app.git", options: { pr: 1, ref: "--upload-pack=x" }, reason: "--ref is not a valid ref" },
  { input: "/srv/app.git", options: { pr: 1, refPattern: "refs/pull/head" }, reason: "containing {n}" },
  { input: "/srv/app.git", options: { pr: 1, refPattern: "refs/{n}/..x" }, reason: "containing {n}" },
  { input: "https://example.com/r.git?x=1", options: { pr: 1 }, reason: "query or fragment" }
]

describe("parsePullRequestRef refuses", () => {
  it.each(refused)("$input $options", ({ input, options, reason }) => {
    const result = parsePullRequestRef(input, options)
    assert.isTrue(Result.isFailure(result), "expected a refusal")
    if (Result.isFailure(result)) {
      assert.strictEqual(result.failure._tag, "InvalidPullRequestRef")
      assert.include(result.failure.reason, reason)
    }
  })
})

describe("credentials in the input", () => {
  const token = "ghp_SECRETtoken123"
  it.each([
    `https://user:${token}@github.com/o/r/pull/1`,
    `https://${token}@github.com/o/r/pull/1`,
    `https://x-access-token:${token}@example.com/r.git`,
    `ssh://git:${token}@example.com/r.git`,
    `git:${token}@example.com:r.git`
  ])("are refused without echoing the token: %s", (input) => {
    const result = parsePullRequestRef(input, { pr: 1 })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.include(result.failure.reason, "credential helper")
      assert.notInclude(result.failure.message, token)
      assert.notInclude(JSON.stringify(result.failure), token)
    }
  })
})

describe("parsePullRequestTarget", () => {
  it.each([
    {
      input: "https://bitbucket.org/w/r/pull-requests/9",
      options: {},
      expect: {
        provider: "bitbucket",
        host: "bitbucket.org",
        repository: "w/r",
        remoteUrl: "https://bitbucket.org/w/r.git"
      }
    },
    {
      input: "https://eu-west-1.console.aws.amazon.com/codesuite/codecommit/repositories/svc/pull-requests/8/details",
      options: { profile: "work" },
      expect: {
        provider: "codecommit",
        host: "eu-west-1",
        remoteUrl: "codecommit::eu-west-1://work@svc",
        profile: "work"
      }
    },
    { input: "codecommit::us-east-1://svc", options: { pr: 1 }, expect: { repository: "svc", pullRequest: 1 } }
  ])("takes the head of $input from the hosting service when no --ref is given", ({ input, options, expect }) => {
    const target = Result.getOrThrow(parsePullRequestTarget(input, options))
    assert.isTrue(isHeadFromService(target))
    assert.notProperty(target, "headRef")
    for (const [key, value] of Object.entries(expect)) {
      assert.deepStrictEqual(target[key as keyof typeof target], value, key)
    }
  })

  it("keeps --ref, and the provider's refs elsewhere", () => {
    const withRef = Result.getOrThrow(parsePullRequestTarget("https://bitbucket.org/w/r/pull-requests/9", { ref: "x" }))
    assert.isFalse(isHeadFromService(withRef))
    const github = Result.getOrThrow(parsePullRequestTarget("o/r#4"))
    assert.isFalse(isHeadFromService(github))
  })
})

describe("withSourceBranch", () => {
  const target = Result.getOrThrow(
    parsePullRequestTarget("https://bitbucket.org/w/r/pull-requests/9")
  ) as PullRequestAtService

  it("fetches the source branch from the repository, or from the fork", () => {
    const same = Result.getOrThrow(withSourceBranch(target, "feature/x", null))
    assert.strictEqual(same.headRef, "refs/heads/feature/x")
    assert.strictEqual(same.remoteUrl, "https://bitbucket.org/w/r.git")
    assert.notProperty(same, "headFromService")
    const fork = Result.getOrThrow(withSourceBranch(target, "fix", "https://bitbucket.org/someone/r.git"))
    assert.strictEqual(fork.remoteUrl, "https://bitbucket.org/someone/r.git")
    assert.strictEqual(fork.repository, "w/r")
  })

  it.each([
    ["a branch that is no ref name", "a..b", null],
    ["a branch read as an option", "-oProxyCommand=x", null],
    ["a fork URL with a credential", "fix", "https://user:secret@bitbucket.org/someone/r.git"],
    ["a fork URL over a remote helper", "fix", "ext::sh -c x"],
    ["a fork URL over ssh", "fix", "ssh://git@bitbucket.org/someone/r.git"]
  ])("refuses %s", (_, branch, cloneUrl) => {
    const result = withSourceBranch(target, branch, cloneUrl)
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) assert.notInclude(result.failure.message, "secret")
  })
})
