import { Schema } from "effect"
import { PULL_REQUEST_STATES } from "./Vocabulary.ts"

/** Where a pull request stands on its hosting service. */
export const PullRequestState = Schema.Literals(PULL_REQUEST_STATES)
export type PullRequestState = typeof PullRequestState.Type

/** What the hosting service says of a pull request. */
export const PullRequestInfo = Schema.Struct({
  title: Schema.String,
  /** The author's login (GitHub, GitLab, Bitbucket) or ARN's user name (CodeCommit). */
  author: Schema.String,
  state: PullRequestState,
  sourceBranch: Schema.String,
  /** The fork's clone URL when the source branch lives in another repository, else null. Never a credential. */
  sourceCloneUrl: Schema.NullOr(Schema.String),
  /**
   * Whether the source repository's owner lets the base repository's
   * maintainers push to the source branch (GitHub's `maintainer_can_modify`,
   * GitLab's `allow_collaboration`); null or absent where the service does not say.
   */
  maintainerCanModify: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  /** The branch it merges into. */
  baseRef: Schema.String,
  /** The head commit: full, except Bitbucket Cloud's 12-character hash (compare with `sameCommit`). */
  headSha: Schema.String
})
export type PullRequestInfo = typeof PullRequestInfo.Type

/**
 * One lookup's answer. `Missing`: the service answered that no such pull
 * request exists (404). `Unknown`: no answer to trust (no credentials,
 * unreachable, timed out, rate limited, refused); `configure` names what the
 * user can set so that it answers. Never thrown: an open that git alone can
 * serve goes on with the metadata unknown.
 */
export type PullRequestLookup =
  | { readonly _tag: "Known"; readonly info: PullRequestInfo }
  | { readonly _tag: "Missing"; readonly detail: string }
  | { readonly _tag: "Unknown"; readonly reason: string; readonly configure?: string }

/**
 * Whether the service's head names the fetched commit: a short hash
 * (Bitbucket reports 12 characters) is compared as a prefix, never shorter than 7.
 */
export const sameCommit = (serviceSha: string, fetchedSha: string): boolean => {
  const service = serviceSha.toLowerCase()
  const fetched = fetchedSha.toLowerCase()
  if (!/^[0-9a-f]{7,64}$/.test(service) || !/^[0-9a-f]{40,64}$/.test(fetched)) return false
  return fetched.startsWith(service)
}
