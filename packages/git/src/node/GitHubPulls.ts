import type { PullRequestInfo, PullRequestLookup } from "@prbox/domain"
import { Effect } from "effect"
import { HostingClients } from "../HostingClients.ts"
import { askService, type Hints, type ServiceFailure, withClient } from "../PullAnswers.ts"
import type { PullRequestLocation } from "../PullRequests.ts"

/** The fields of `GET /repos/{owner}/{repo}/pulls/{pull_number}` that prbox reads. */
export interface GitHubPull {
  readonly title: string
  readonly state: string
  readonly merged_at: string | null
  readonly user: { readonly login: string } | null
  readonly head: { readonly ref: string; readonly sha: string; readonly repo: GitHubRepo | null }
  readonly base: { readonly ref: string; readonly repo: GitHubRepo | null }
  readonly maintainer_can_modify?: boolean
}

interface GitHubRepo {
  readonly full_name: string
  readonly clone_url: string
}

export const fromGitHub = (pull: GitHubPull): PullRequestInfo => ({
  title: pull.title,
  // A deleted account's pull requests are GitHub's "ghost" user's.
  author: pull.user?.login ?? "ghost",
  state: pull.merged_at !== null ? "merged" : pull.state === "open" ? "open" : "closed",
  sourceBranch: pull.head.ref,
  // A deleted fork has no head repository: null here, and the open still
  // fetches refs/pull/N/head, which GitHub keeps on the base repository.
  sourceCloneUrl:
    pull.head.repo !== null && pull.head.repo.full_name !== pull.base.repo?.full_name ? pull.head.repo.clone_url : null,
  maintainerCanModify: pull.maintainer_can_modify ?? null,
  baseRef: pull.base.ref,
  headSha: pull.head.sha
})

/** Octokit's `RequestError` with the service's response (none when the connection failed). */
const failure = (error: unknown): ServiceFailure | undefined => {
  if (typeof error !== "object" || error === null || !("status" in error) || !("response" in error)) return undefined
  const response = error.response as
    | { readonly headers?: Record<string, string | number | undefined>; readonly data?: unknown }
    | undefined
  if (response === undefined || typeof error.status !== "number") return undefined
  const data = response.data
  const message =
    typeof data === "object" && data !== null && "message" in data && typeof data.message === "string"
      ? data.message
      : undefined
  const headers = Object.fromEntries(
    Object.entries(response.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value?.toString()])
  )
  return { status: error.status, headers, message }
}

/** GitHub or GitHub Enterprise, through Octokit's `pulls.get`. */
export const lookupGitHub = (
  at: PullRequestLocation,
  token: string,
  origin: string | undefined,
  hints: Hints
): Effect.Effect<PullRequestLookup, never, HostingClients> =>
  Effect.flatMap(HostingClients, (clients) =>
    withClient("GitHub", clients.github({ host: at.host, origin }, token), (octokit) => {
      const [owner = "", repo = ""] = at.repository.split("/")
      return askService(at, hints, {
        ask: (signal) =>
          octokit.rest.pulls
            .get({ owner, repo, pull_number: at.pullRequest, request: { signal } })
            .then((response) => response.data),
        known: fromGitHub,
        failure
      })
    })
  )
