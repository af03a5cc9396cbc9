import type { PullRequestInfo, PullRequestLookup } from "@prbox/domain"
import type { Effect } from "effect"
import { authorization, type HostCredential } from "../HostCredentials.ts"
import { askService, type Hints, type ServiceFailure } from "../PullAnswers.ts"
import type { PullRequestLocation } from "../PullRequests.ts"

/** The fields of Bitbucket Cloud's `GET /2.0/repositories/{workspace}/{repo_slug}/pullrequests/{id}` that prbox reads. */
export interface BitbucketPull {
  readonly title: string
  readonly state: string
  readonly author?: { readonly nickname?: string; readonly display_name?: string } | null
  readonly source: BitbucketEnd
  readonly destination: BitbucketEnd
}

interface BitbucketEnd {
  readonly branch: { readonly name: string }
  readonly commit: { readonly hash: string } | null
  readonly repository?: { readonly full_name: string } | null
}

export const defaultBitbucketApi = "https://api.bitbucket.org"

const states: Readonly<Record<string, PullRequestInfo["state"]>> = {
  OPEN: "open",
  MERGED: "merged",
  DECLINED: "closed",
  SUPERSEDED: "closed"
}

export const fromBitbucket = (pull: BitbucketPull, host: string): PullRequestInfo => {
  const fork = pull.source.repository?.full_name
  return {
    title: pull.title,
    author: pull.author?.nickname ?? pull.author?.display_name ?? "unknown",
    state: states[pull.state] ?? "closed",
    sourceBranch: pull.source.branch.name,
    // A deleted fork has no source repository: null here, so the open fetches
    // the branch from the destination repository, and the head check refuses
    // whatever a same-named branch there holds.
    sourceCloneUrl:
      fork !== undefined && fork !== pull.destination.repository?.full_name ? `https://${host}/${fork}.git` : null,
    baseRef: pull.destination.branch.name,
    // Bitbucket reports 12 characters: compared with `sameCommit`.
    headSha: pull.source.commit?.hash ?? ""
  }
}

class BitbucketRefusal extends Error {
  readonly failure: ServiceFailure
  constructor(failure: ServiceFailure) {
    super(`Bitbucket answered ${failure.status}`)
    this.failure = failure
  }
}

const refusal = async (response: Response): Promise<BitbucketRefusal> => {
  const body: unknown = await response.json().catch(() => undefined)
  const error = typeof body === "object" && body !== null && "error" in body ? body.error : undefined
  const message =
    typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
      ? error.message
      : undefined
  return new BitbucketRefusal({
    status: response.status,
    headers: Object.fromEntries(response.headers.entries()),
    message
  })
}

/** Bitbucket Cloud's one pull request endpoint, over plain HTTP. */
export const lookupBitbucket = (
  at: PullRequestLocation,
  credential: HostCredential,
  apiBase: string,
  hints: Hints
): Effect.Effect<PullRequestLookup> => {
  const [workspace = "", repo = ""] = at.repository.split("/")
  const url = `${apiBase}/2.0/repositories/${encodeURIComponent(workspace)}/${encodeURIComponent(repo)}/pullrequests/${at.pullRequest}`
  return askService(at, hints, {
    ask: async (signal) => {
      const response = await fetch(url, {
        headers: { authorization: authorization(credential), accept: "application/json", "user-agent": "prbox" },
        signal
      })
      if (!response.ok) throw await refusal(response)
      return (await response.json()) as BitbucketPull
    },
    known: (pull) => fromBitbucket(pull, at.host),
    failure: (error) => (error instanceof BitbucketRefusal ? error.failure : undefined)
  })
}
