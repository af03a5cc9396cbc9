import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber } from "@prbox/domain"
import { Effect } from "effect"
import type { PullRequestLocation } from "../src/index.ts"
import { hostEnvironment, localApi, lookupAll, type Reply, type Seen, statesOf } from "./hostingApi.ts"

const token = "glpat-prboxTestToken000000001"
const host = "gitlab.example.com"

const at = (n: number): PullRequestLocation => ({
  provider: "gitlab",
  host,
  repository: "group/sub/project",
  pullRequest: PullRequestNumber.make(n)
})

/** `GET /projects/:id/merge_requests/:merge_request_iid`, shaped as the API reference's example. */
const mergeRequest = (iid: number, state: string, sourceProject = 15513260) => ({
  id: 155016530 + iid,
  iid,
  project_id: 15513260,
  title: "Manual job rules",
  description: "",
  state,
  created_at: "2022-05-13T07:26:38.402Z",
  updated_at: "2022-05-14T03:38:31.354Z",
  merged_by: null,
  merged_at: state === "merged" ? "2022-05-14T03:38:31.354Z" : null,
  closed_by: null,
  closed_at: null,
  target_branch: "main",
  source_branch: "manual-job-rules",
  user_notes_count: 0,
  upvotes: 0,
  downvotes: 0,
  author: {
    id: 4155490,
    username: "marcel.amirault",
    name: "Marcel Amirault",
    state: "active",
    web_url: "https://gitlab.example.com/marcel.amirault"
  },
  assignees: [],
  reviewers: [],
  source_project_id: sourceProject,
  target_project_id: 15513260,
  labels: [],
  draft: false,
  work_in_progress: false,
  milestone: null,
  merge_when_pipeline_succeeds: false,
  merge_status: "can_be_merged",
  detailed_merge_status: "mergeable",
  sha: "e82eb4a098e32c796079ca3915e07487fc4db24c",
  merge_commit_sha: null,
  squash_commit_sha: null,
  references: { short: `!${iid}`, relative: `!${iid}`, full: `group/sub/project!${iid}` },
  web_url: `https://gitlab.example.com/group/sub/project/-/merge_requests/${iid}`
})

const requests: Record<string, unknown> = {
  "1": mergeRequest(1, "opened"),
  "2": mergeRequest(2, "merged"),
  "3": mergeRequest(3, "closed"),
  "4": mergeRequest(4, "locked"),
  "5": mergeRequest(5, "opened", 777),
  "6": mergeRequest(6, "opened", 888)
}

/** Answers as GitLab does, with its documented error bodies. */
const gitlab = (seen: Seen): Reply => {
  if (seen.headers.authorization !== `Bearer ${token}`) return { status: 401, json: { message: "401 Unauthorized" } }
  if (seen.url === "/api/v4/projects/777") {
    return {
      status: 200,
      json: {
        id: 777,
        path_with_namespace: "forker/project",
        http_url_to_repo: "https://gitlab.example.com/forker/project.git"
      }
    }
  }
  const iid = /^\/api\/v4\/projects\/group%2Fsub%2Fproject\/merge_requests\/(\d+)$/.exec(seen.url ?? "")?.[1] ?? ""
  if (iid === "429") return { status: 429, headers: { "retry-after": "60" }, json: { message: "Retry later" } }
  const found = requests[iid]
  return found === undefined ? { status: 404, json: { message: "404 Not found" } } : { status: 200, json: found }
}

describe("NodePullRequests: GitLab through Gitbeaker", () => {
  it.live("opened, merged, closed and locked merge requests (fake GitLab API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ GITLAB_TOKEN: token, GITLAB_HOST: host })
        const api = yield* localApi(gitlab)
        const answers = yield* lookupAll({ apiBase: () => api.base }, [at(1), at(2), at(3), at(4)])
        assert.deepStrictEqual(answers[0], {
          _tag: "Known",
          info: {
            title: "Manual job rules",
            author: "marcel.amirault",
            state: "open",
            sourceBranch: "manual-job-rules",
            sourceCloneUrl: null,
            maintainerCanModify: null,
            baseRef: "main",
            headSha: "e82eb4a098e32c796079ca3915e07487fc4db24c"
          }
        })
        assert.deepStrictEqual(statesOf(answers), ["open", "merged", "closed", "open"])
      })
    )
  )

  it.live("a fork's clone URL from its project; a fork that is gone has none (fake GitLab API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ GITLAB_TOKEN: token, GITLAB_HOST: host })
        const api = yield* localApi(gitlab)
        const [fork, gone] = yield* lookupAll({ apiBase: () => api.base }, [at(5), at(6)])
        assert.strictEqual(
          fork._tag === "Known" ? fork.info.sourceCloneUrl : fork._tag,
          "https://gitlab.example.com/forker/project.git"
        )
        assert.deepStrictEqual(gone._tag === "Known" ? [gone.info.sourceCloneUrl, gone.info.state] : gone, [
          null,
          "open"
        ])
      })
    )
  )

  it.live(
    "404 is Missing, 401 names GITLAB_TOKEN, 429 is rate limited; the token is in no answer (fake GitLab API)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          yield* hostEnvironment({ GITLAB_TOKEN: token, GITLAB_HOST: host })
          const api = yield* localApi(gitlab)
          const [missing, limited] = yield* lookupAll({ apiBase: () => api.base }, [at(99), at(429)])
          process.env.GITLAB_TOKEN = "glpat-wrong"
          const [refused] = yield* lookupAll({ apiBase: () => api.base }, [at(1)])
          assert.deepStrictEqual(missing, {
            _tag: "Missing",
            detail: "gitlab.example.com has no pull request #99 in group/sub/project (404 Not found)"
          })
          assert.deepStrictEqual(refused, {
            _tag: "Unknown",
            reason: "gitlab.example.com refused the credentials (401)",
            configure:
              "set GITLAB_TOKEN with GITLAB_HOST=gitlab.example.com, or store a token with `git credential approve` for gitlab.example.com"
          })
          assert.deepStrictEqual(limited, {
            _tag: "Unknown",
            reason: "gitlab.example.com rate limited the lookup (429); retry after 60 s"
          })
          assert.strictEqual(api.seen.filter((seen) => seen.url?.endsWith("/429")).length, 1, "asked once, not retried")
          for (const answer of [missing, limited, refused]) assert.notInclude(JSON.stringify(answer), "glpat-")
        })
      )
  )

  it.live(
    "a merge request link to another host gets no GITLAB_TOKEN: nothing reaches its API (fake GitLab API at a link's host)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const api = yield* localApi(gitlab)
          const evil = (n: number): PullRequestLocation => ({ ...at(n), host: "evil.example" })
          // Set for gitlab.com (no GITLAB_HOST), then for this machine's own GitLab: never for the link's host.
          for (const named of [{}, { GITLAB_HOST: `https://${host}/` }, { GL_HOST: host }]) {
            yield* hostEnvironment({ GITLAB_TOKEN: token, ...named })
            const [answer] = yield* lookupAll({ apiBase: () => api.base }, [evil(1)])
            assert.deepStrictEqual(answer, {
              _tag: "Unknown",
              reason: "no credentials for evil.example",
              configure:
                "set GITLAB_TOKEN with GITLAB_HOST=evil.example, or store a token with `git credential approve` for evil.example"
            })
          }
          assert.strictEqual(api.seen.length, 0, "the link's host was asked")
          // The host GITLAB_HOST names (a URL) gets it.
          yield* hostEnvironment({ GITLAB_TOKEN: token, GITLAB_HOST: `https://${host}/` })
          const [known] = yield* lookupAll({ apiBase: () => api.base }, [at(1)])
          assert.strictEqual(known._tag, "Known")
        })
      )
  )

  it.live("a GitLab that never answers is Unknown once the bound passes (fake GitLab API)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        yield* hostEnvironment({ GITLAB_TOKEN: token, GITLAB_HOST: host })
        const api = yield* localApi(() => "hang")
        const arrived = api.arrived()
        const [answer] = yield* lookupAll({ apiBase: () => api.base, timeoutMs: 300 }, [at(1)])
        yield* Effect.promise(() => arrived)
        assert.deepStrictEqual(answer, { _tag: "Unknown", reason: "gitlab.example.com did not answer within 0.3 s" })
      })
    )
  )
})
