import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber } from "@prbox/domain"
import { Effect } from "effect"
import type { PullRequestLocation } from "../src/index.ts"
import {
  hostEnvironment,
  localApi,
  lookup,
  lookupAll,
  type Reply,
  resolverLayer,
  type Seen,
  statesOf
} from "./hostingApi.ts"

const apiToken = "ATATTprboxTestApiToken000000001"
const basic = `Basic ${Buffer.from(`emma@example.com:${apiToken}`).toString("base64")}`

const at = (n: number, host = "bitbucket.org"): PullRequestLocation => ({
  provider: "bitbucket",
  host,
  repository: "teamsinspace/website",
  pullRequest: PullRequestNumber.make(n)
})

const repository = (fullName: string) => ({
  type: "repository",
  full_name: fullName,
  name: fullName.split("/")[1],
  uuid: "{b7a8e6c4-1c6f-4c7a-9a55-5d2f6b0a7c11}",
  links: { html: { href: `https://bitbucket.org/${fullName}` } }
})

/** `GET /2.0/repositories/{workspace}/{repo_slug}/pullrequests/{pull_request_id}`, shaped as the API reference's pullrequest. */
const pullRequest = (id: number, state: string, source: { repository?: unknown; hash?: string } = {}) => ({
  type: "pullrequest",
  id,
  title: "Add the pricing page",
  summary: { raw: "", markup: "markdown", html: "" },
  state,
  author: {
    type: "user",
    display_name: "Emma Paris",
    nickname: "emmap",
    uuid: "{d301aafa-d676-4ee0-88be-962be7417567}",
    account_id: "557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443"
  },
  source: {
    branch: { name: "feature/pricing" },
    commit: { type: "commit", hash: source.hash ?? "7a4f3c2b1d0e" },
    ...("repository" in source
      ? source.repository === undefined
        ? {}
        : { repository: source.repository }
      : { repository: repository("teamsinspace/website") })
  },
  destination: {
    branch: { name: "main" },
    commit: { type: "commit", hash: "9c823062cf99" },
    repository: repository("teamsinspace/website")
  },
  merge_commit: state === "MERGED" ? { hash: "0a1b2c3d4e5f" } : null,
  comment_count: 0,
  task_count: 0,
  close_source_branch: false,
  closed_by: null,
  reason: "",
  created_on: "2024-05-02T10:11:12.000000+00:00",
  updated_on: "2024-05-03T10:11:12.000000+00:00",
  reviewers: [],
  participants: []
})

const pulls: Record<string, unknown> = {
  "1": pullRequest(1, "OPEN"),
  "2": pullRequest(2, "MERGED"),
  "3": pullRequest(3, "DECLINED"),
  "4": pullRequest(4, "SUPERSEDED"),
  "5": pullRequest(5, "OPEN", { repository: repository("emmap/website"), hash: "5555aaaa5555" }),
  "6": pullRequest(6, "OPEN", { repository: undefined, hash: "6666bbbb6666" })
}

/** Answers as Bitbucket Cloud does, with its documented error body. */
const bitbucket =
  (accepted: string) =>
  (seen: Seen): Reply => {
    if (seen.headers.authorization !== accepted) {
      return {
        status: 401,
        json: { type: "error", error: { message: `Unauthorized: ${String(seen.headers.authorization)}` } }
      }
    }
    const id = /^\/2\.0\/repositories\/teamsinspace\/website\/pullrequests\/(\d+)$/.exec(seen.url ?? "")?.[1] ?? ""
    if (id === "429")
      return {
        status: 429,
        headers: { "retry-after": "120" },
        json: { type: "error", error: { message: "Rate limit" } }
      }
    const found = pulls[id]
    return found === undefined
      ? { status: 404, json: { type: "error", error: { message: "Pull request not found" } } }
      : { status: 200, json: found }
  }

describe("NodePullRequests: Bitbucket Cloud over its REST API", () => {
  it.live("open, merged, declined and superseded pull requests, with an email and API token (fake Bitbucket API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ BITBUCKET_EMAIL: "emma@example.com", BITBUCKET_API_TOKEN: apiToken })
        const api = yield* localApi(bitbucket(basic))
        const answers = yield* lookupAll({ bitbucketApiBase: api.base }, [at(1), at(2), at(3), at(4)])
        assert.deepStrictEqual(answers[0], {
          _tag: "Known",
          info: {
            title: "Add the pricing page",
            author: "emmap",
            state: "open",
            sourceBranch: "feature/pricing",
            sourceCloneUrl: null,
            baseRef: "main",
            headSha: "7a4f3c2b1d0e"
          }
        })
        assert.deepStrictEqual(statesOf(answers), ["open", "merged", "closed", "closed"])
      })
    )
  )

  it.live("a fork's clone URL; a deleted fork (no source repository) has none (fake Bitbucket API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ BITBUCKET_TOKEN: apiToken })
        const api = yield* localApi(bitbucket(`Bearer ${apiToken}`))
        const [fork, deleted] = yield* lookupAll({ bitbucketApiBase: api.base }, [at(5), at(6)])
        assert.deepStrictEqual(fork._tag === "Known" ? [fork.info.sourceCloneUrl, fork.info.headSha] : fork, [
          "https://bitbucket.org/emmap/website.git",
          "5555aaaa5555"
        ])
        assert.deepStrictEqual(deleted._tag === "Known" ? [deleted.info.sourceCloneUrl, deleted.info.state] : deleted, [
          null,
          "open"
        ])
      })
    )
  )

  it.live("git's credential helper gives the user name and password for basic auth (fake Bitbucket API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({}, `echo username=emma@example.com; echo password=${apiToken}`)
        const api = yield* localApi(bitbucket(basic))
        const [answer] = yield* lookupAll({ bitbucketApiBase: api.base }, [at(1)])
        assert.strictEqual(answer._tag, "Known")
      })
    )
  )

  it.live(
    "404 is Missing, 401 and no credential name what to set, 429 gives Retry-After; the token is in no answer (fake Bitbucket API)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostEnvironment({ BITBUCKET_EMAIL: "emma@example.com", BITBUCKET_API_TOKEN: apiToken })
          const api = yield* localApi(bitbucket(basic))
          const layer = resolverLayer({ bitbucketApiBase: api.base })
          const [missing, limited] = yield* Effect.all([lookup(at(98)), lookup(at(429))]).pipe(Effect.provide(layer))
          process.env.BITBUCKET_API_TOKEN = "ATATTprboxWrongToken"
          const [refused] = yield* lookupAll({ bitbucketApiBase: api.base }, [at(1)])
          yield* hostEnvironment({})
          const [none] = yield* lookupAll({ bitbucketApiBase: api.base }, [at(1)])
          const configure =
            "set BITBUCKET_EMAIL and BITBUCKET_API_TOKEN (or BITBUCKET_TOKEN), or store a user name and API token with `git credential approve` for bitbucket.org"
          assert.deepStrictEqual(missing, {
            _tag: "Missing",
            detail: "bitbucket.org has no pull request #98 in teamsinspace/website (Pull request not found)"
          })
          assert.deepStrictEqual(limited, {
            _tag: "Unknown",
            reason: "bitbucket.org rate limited the lookup (429); retry after 120 s"
          })
          assert.deepStrictEqual(refused, {
            _tag: "Unknown",
            reason: "bitbucket.org refused the credentials (401)",
            configure
          })
          assert.deepStrictEqual(none, { _tag: "Unknown", reason: "no credentials for bitbucket.org", configure })
          for (const answer of [missing, limited, refused, none]) assert.notInclude(JSON.stringify(answer), "ATATT")
        })
      )
  )

  it.live("a Bitbucket Server host is not asked: its pull request refs serve (fake Bitbucket API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ BITBUCKET_TOKEN: apiToken })
        const api = yield* localApi(bitbucket(`Bearer ${apiToken}`))
        const [answer] = yield* lookupAll({ bitbucketApiBase: api.base }, [at(1, "bitbucket.example.com")])
        assert.deepStrictEqual(answer, {
          _tag: "Unknown",
          reason: "bitbucket.example.com's Bitbucket Server API is not asked"
        })
        assert.strictEqual(api.seen.length, 0)
      })
    )
  )
})
