import { readFileSync } from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber } from "@prbox/domain"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import type { PullRequestLocation } from "../src/index.ts"
import {
  hostEnvironment,
  localApi,
  lookup,
  lookupAll,
  type Reply,
  refusingBase,
  resolverLayer,
  type Seen,
  statesOf
} from "./hostingApi.ts"

const token = "ghp_prboxTestToken0000000000000000000001"

const at = (n: number, host = "github.com"): PullRequestLocation => ({
  provider: "github",
  host,
  repository: "octocat/Hello-World",
  pullRequest: PullRequestNumber.make(n)
})

const repo = (fullName: string) => ({
  id: 1296269,
  name: fullName.split("/")[1],
  full_name: fullName,
  private: false,
  html_url: `https://github.com/${fullName}`,
  clone_url: `https://github.com/${fullName}.git`,
  ssh_url: `git@github.com:${fullName}.git`
})

/** `GET /repos/{owner}/{repo}/pulls/{pull_number}`, shaped as the REST API reference's example. */
const pull = (number: number, fields: { state?: string; merged_at?: string | null; head?: unknown } = {}) => ({
  url: `https://api.github.com/repos/octocat/Hello-World/pulls/${number}`,
  id: 1,
  node_id: "MDExOlB1bGxSZXF1ZXN0MQ==",
  html_url: `https://github.com/octocat/Hello-World/pull/${number}`,
  number,
  state: fields.state ?? "open",
  locked: false,
  title: "Amazing new feature",
  user: { login: "octocat", id: 1, type: "User", site_admin: false },
  body: "Please pull these awesome changes in!",
  created_at: "2011-01-26T19:01:12Z",
  updated_at: "2011-01-26T19:01:12Z",
  closed_at: fields.state === "closed" ? "2011-01-26T19:01:12Z" : null,
  merged_at: fields.merged_at ?? null,
  merge_commit_sha: "e5bd3914e2e596debea16f433f57875b5b90bcd6",
  head: fields.head ?? {
    label: "octocat:new-topic",
    ref: "new-topic",
    sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e",
    repo: repo("octocat/Hello-World")
  },
  base: {
    label: "octocat:master",
    ref: "master",
    sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e",
    repo: repo("octocat/Hello-World")
  },
  draft: false,
  merged: fields.merged_at !== undefined && fields.merged_at !== null
})

const pulls: Record<string, unknown> = {
  "1347": pull(1347),
  "1348": pull(1348, { state: "closed", merged_at: "2011-01-26T19:01:12Z" }),
  "1349": pull(1349, { state: "closed" }),
  "1350": pull(1350, {
    head: {
      label: "forker:fix",
      ref: "fix",
      sha: "1111111111111111111111111111111111111111",
      repo: repo("forker/Hello-World")
    }
  }),
  "1351": pull(1351, {
    head: { label: "forker:gone", ref: "gone", sha: "2222222222222222222222222222222222222222", repo: null }
  })
}

/** Answers as GitHub does: the pull request when the token is the user's, its documented errors otherwise. */
const github = (seen: Seen): Reply => {
  if (seen.headers.authorization !== `token ${token}`) {
    // A service that echoes what it was sent: the answer must still not carry it.
    return { status: 401, json: { message: `Bad credentials ${String(seen.headers.authorization)}`, status: "401" } }
  }
  const number = /\/repos\/octocat\/Hello-World\/pulls\/(\d+)$/.exec(seen.url ?? "")?.[1] ?? ""
  if (number === "429")
    return { status: 429, headers: { "retry-after": "37" }, json: { message: "API rate limit exceeded" } }
  if (number === "403") {
    const reset = String(Math.floor(Date.now() / 1000) + 120)
    return {
      status: 403,
      headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset },
      json: { message: "API rate limit exceeded for user ID 1." }
    }
  }
  const found = pulls[number]
  return found === undefined
    ? {
        status: 404,
        json: {
          message: `Not Found (asked with ${token})`,
          documentation_url: "https://docs.github.com/rest",
          status: "404"
        }
      }
    : { status: 200, json: found }
}

describe("NodePullRequests: GitHub through Octokit", () => {
  it.live("open, merged and closed pull requests, on github.com and an Enterprise host (fake GitHub API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ GH_TOKEN: token, GH_ENTERPRISE_TOKEN: token, GH_HOST: "git.example.com" })
        const api = yield* localApi(github)
        const answers = yield* lookupAll({ apiBase: () => api.base }, [
          at(1347),
          at(1348),
          at(1349),
          at(1347, "git.example.com")
        ])
        assert.deepStrictEqual(answers[0], {
          _tag: "Known",
          info: {
            title: "Amazing new feature",
            author: "octocat",
            state: "open",
            sourceBranch: "new-topic",
            sourceCloneUrl: null,
            maintainerCanModify: null,
            baseRef: "master",
            headSha: "6dcb09b5b57875f334f61aebed695e2e4193db5e"
          }
        })
        assert.deepStrictEqual(statesOf(answers), ["open", "merged", "closed", "open"])
        assert.deepStrictEqual(
          api.seen.map((seen) => seen.url),
          [
            "/repos/octocat/Hello-World/pulls/1347",
            "/repos/octocat/Hello-World/pulls/1348",
            "/repos/octocat/Hello-World/pulls/1349",
            "/api/v3/repos/octocat/Hello-World/pulls/1347"
          ]
        )
      })
    )
  )

  it.live("a fork's clone URL; a deleted fork (head.repo null) has none (fake GitHub API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ GITHUB_TOKEN: token })
        const api = yield* localApi(github)
        const [fork, deleted] = yield* lookupAll({ apiBase: () => api.base }, [at(1350), at(1351)])
        assert.strictEqual(
          fork._tag === "Known" ? fork.info.sourceCloneUrl : fork._tag,
          "https://github.com/forker/Hello-World.git"
        )
        assert.strictEqual(fork._tag === "Known" ? fork.info.sourceBranch : fork._tag, "fix")
        assert.deepStrictEqual(
          deleted._tag === "Known" ? [deleted.info.sourceCloneUrl, deleted.info.state, deleted.info.headSha] : deleted,
          [null, "open", "2222222222222222222222222222222222222222"]
        )
      })
    )
  )

  it.live(
    "404 is Missing with the service's word, 401 and rate limits are Unknown; the token is in no answer (fake GitHub API)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostEnvironment({ GH_TOKEN: token })
          const api = yield* localApi(github)
          const layer = resolverLayer({ apiBase: () => api.base })
          const [missing, limited, exhausted] = yield* Effect.all([
            lookup(at(7)),
            lookup(at(429)),
            lookup(at(403))
          ]).pipe(Effect.provide(layer))
          process.env.GH_TOKEN = "ghp_someoneElsesToken"
          const [refused] = yield* lookupAll({ apiBase: () => api.base }, [at(1347)])
          assert.deepStrictEqual(missing, {
            _tag: "Missing",
            detail: "github.com has no pull request #7 in octocat/Hello-World (Not Found (asked with ***))"
          })
          assert.deepStrictEqual(refused, {
            _tag: "Unknown",
            reason: "github.com refused the credentials (401)",
            configure: "set GH_TOKEN or store a token with `git credential approve` for github.com"
          })
          assert.deepStrictEqual(limited, {
            _tag: "Unknown",
            reason: "github.com rate limited the lookup (429); retry after 37 s"
          })
          assert.match(
            exhausted._tag === "Unknown" ? exhausted.reason : "",
            /^github\.com rate limited the lookup \(403\); retry after 1[12]\d s$/
          )
          for (const answer of [missing, limited, exhausted, refused]) {
            assert.notInclude(JSON.stringify(answer), token)
            assert.notInclude(JSON.stringify(answer), "ghp_someoneElsesToken")
          }
        })
      )
  )

  it.live(
    "a service that never answers is Unknown once the bound passes; one that refuses connections too (fake GitHub API)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostEnvironment({ GH_TOKEN: token })
          const api = yield* localApi(() => "hang")
          const arrived = api.arrived()
          const [slow] = yield* lookupAll({ apiBase: () => api.base, timeoutMs: 300 }, [at(1347)])
          yield* Effect.promise(() => arrived)
          assert.deepStrictEqual(slow, { _tag: "Unknown", reason: "github.com did not answer within 0.3 s" })
          const closed = yield* refusingBase
          const [refused] = yield* lookupAll({ apiBase: () => closed }, [at(1347)])
          assert.deepStrictEqual(refused, { _tag: "Unknown", reason: "could not ask github.com (ECONNREFUSED)" })
        })
      )
  )

  it.effect(
    "answers are reused for 60 s by the Clock, then asked again; Unknown is not reused (fake GitHub API, TestClock)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostEnvironment({ GH_TOKEN: token })
          let failing = true
          const api = yield* localApi((seen) =>
            seen.url?.endsWith("/1349") && failing ? { status: 502, json: {} } : github(seen)
          )
          yield* Effect.gen(function* () {
            yield* lookup(at(1347))
            yield* lookup(at(7))
            yield* TestClock.adjust("59999 millis")
            yield* lookup(at(1347))
            yield* lookup(at(7))
            assert.strictEqual(api.seen.length, 2, "Known and Missing reused within the minute")
            yield* TestClock.adjust("2 millis")
            yield* lookup(at(1347))
            assert.strictEqual(api.seen.length, 3, "asked again after the minute")
            const first = yield* lookup(at(1349))
            failing = false
            const second = yield* lookup(at(1349))
            assert.deepStrictEqual([first._tag, second._tag], ["Unknown", "Known"])
            assert.strictEqual(api.seen.length, 5, "Unknown is asked again")
          }).pipe(Effect.provide(resolverLayer({ apiBase: () => api.base })))
        })
      )
  )

  it.live("concurrent lookups of one pull request share one request (fake GitHub API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ GH_TOKEN: token })
        const api = yield* localApi(github)
        const arrived = api.arrived()
        const answers = yield* Effect.gen(function* () {
          const fibers = yield* Effect.forkChild(
            Effect.all([lookup(at(1347)), lookup(at(1347)), lookup(at(1347))], { concurrency: "unbounded" })
          )
          yield* Effect.promise(() => arrived)
          return yield* Fiber.join(fibers)
        }).pipe(Effect.provide(resolverLayer({ apiBase: () => api.base })))
        assert.strictEqual(api.seen.length, 1)
        assert.deepStrictEqual(answers[1], answers[0])
        assert.deepStrictEqual(answers[2], answers[0])
      })
    )
  )

  it.live(
    "a pull request link to a host GH_HOST does not name gets no token: nothing reaches its API (fake GitHub API at a link's host)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const api = yield* localApi(github)
          for (const named of [{}, { GH_HOST: "git.example.com" }]) {
            yield* hostEnvironment({ GH_TOKEN: token, GITHUB_TOKEN: token, GH_ENTERPRISE_TOKEN: token, ...named })
            const [answer] = yield* lookupAll({ apiBase: () => api.base }, [at(1347, "evil.example")])
            assert.strictEqual(answer?._tag, "Unknown")
          }
          assert.strictEqual(api.seen.length, 0, "the link's host was asked")
        })
      )
  )

  it.live("no credential: Unknown naming what to set, and nothing is asked (fake GitHub API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({})
        const api = yield* localApi(github)
        const [answer] = yield* lookupAll({ apiBase: () => api.base }, [at(1347, "git.example.com")])
        assert.deepStrictEqual(answer, {
          _tag: "Unknown",
          reason: "no credentials for git.example.com",
          configure:
            "set GH_ENTERPRISE_TOKEN with GH_HOST=git.example.com, or store a token with `git credential approve` for git.example.com"
        })
        assert.strictEqual(api.seen.length, 0)
      })
    )
  )

  it.live("the token from the user's git credential helper, asked for https://<host> only (fake GitHub API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const home = yield* hostEnvironment({}, `cat > "$HOME/asked"; echo username=octocat; echo password=${token}`)
        const api = yield* localApi(github)
        const [answer] = yield* lookupAll({ apiBase: () => api.base }, [at(1347)])
        assert.strictEqual(answer._tag, "Known")
        assert.strictEqual(api.seen[0]?.headers.authorization, `token ${token}`)
        assert.include(readFileSync(NodePath.join(home, "asked"), "utf8"), "protocol=https\nhost=github.com\n")
      })
    )
  )
})
