import type { PullRequestInfo, PullRequestLookup } from "@prbox/domain"
import { Effect } from "effect"
import { GitLabRefusal } from "../GitLabTransport.ts"
import { HostingClients } from "../HostingClients.ts"
import { askService, type Hints, withClient } from "../PullAnswers.ts"
import type { PullRequestLocation } from "../PullRequests.ts"

/** The fields of `GET /projects/:id/merge_requests/:iid` that prbox reads. */
export interface GitLabMergeRequest {
  readonly title: string
  readonly state: string
  readonly author: { readonly username: string } | null
  readonly source_branch: string
  readonly target_branch: string
  readonly sha: string
  readonly source_project_id: number | null
  readonly target_project_id: number
  readonly allow_collaboration?: boolean
}

const states: Readonly<Record<string, PullRequestInfo["state"]>> = {
  opened: "open",
  // A locked merge request is still open: locked while it is being merged.
  locked: "open",
  merged: "merged",
  closed: "closed"
}

export const fromGitLab = (request: GitLabMergeRequest, sourceCloneUrl: string | null): PullRequestInfo => ({
  title: request.title,
  author: request.author?.username ?? "ghost",
  state: states[request.state] ?? "closed",
  sourceBranch: request.source_branch,
  sourceCloneUrl,
  maintainerCanModify: request.allow_collaboration ?? null,
  baseRef: request.target_branch,
  headSha: request.sha
})

/** GitLab, through Gitbeaker's `MergeRequests.show` (and `Projects.show` for a fork's clone URL). */
export const lookupGitLab = (
  at: PullRequestLocation,
  token: string,
  origin: string | undefined,
  timeoutMs: number,
  hints: Hints
): Effect.Effect<PullRequestLookup, never, HostingClients> =>
  Effect.flatMap(HostingClients, (clients) =>
    withClient("GitLab", clients.gitlab({ host: at.host, origin }, token, timeoutMs), (gitlab) =>
      askService(at, hints, {
        ask: async () => {
          const request = (await gitlab.MergeRequests.show(
            at.repository,
            at.pullRequest
          )) as unknown as GitLabMergeRequest
          if (request.source_project_id === null || request.source_project_id === request.target_project_id) {
            return fromGitLab(request, null)
          }
          // A fork whose project is gone (or hidden from this token): null, and
          // the open still fetches refs/merge-requests/N/head, which GitLab
          // keeps on the target project.
          const fork = await gitlab.Projects.show(request.source_project_id).catch(() => undefined)
          return fromGitLab(request, typeof fork?.http_url_to_repo === "string" ? fork.http_url_to_repo : null)
        },
        known: (info) => info,
        failure: (error) => (error instanceof GitLabRefusal ? error.failure : undefined)
      })
    )
  )
