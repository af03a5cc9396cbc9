import type { PullRequest } from "@aws-sdk/client-codecommit"
import type { PullRequestInfo, PullRequestLookup } from "@prbox/domain"
import type { Effect } from "effect"
import { askService, type Hints, type ServiceFailure } from "../PullAnswers.ts"
import type { PullRequestLocation } from "../PullRequests.ts"

/** CodeCommit's answer; pull request ids are per region, so the repository is checked too. */
export const fromCodeCommit = (pull: PullRequest, repository: string): PullRequestInfo | PullRequestLookup => {
  const target = pull.pullRequestTargets?.find((each) => each.repositoryName === repository)
  if (target === undefined) {
    return { _tag: "Missing", detail: `pull request #${pull.pullRequestId ?? "?"} is not one of ${repository}'s` }
  }
  const branch = (ref: string | undefined) => (ref ?? "").replace(/^refs\/heads\//, "")
  return {
    title: pull.title ?? "",
    // arn:aws:iam::123456789012:user/Mary_Major → Mary_Major (an assumed role: its session name).
    author: pull.authorArn?.split("/").at(-1) ?? "unknown",
    state: pull.pullRequestStatus === "OPEN" ? "open" : target.mergeMetadata?.isMerged === true ? "merged" : "closed",
    sourceBranch: branch(target.sourceReference),
    sourceCloneUrl: null,
    baseRef: branch(target.destinationReference),
    headSha: target.sourceCommit ?? ""
  }
}

// The service's exception names, as HTTP would have said them.
const statuses: Readonly<Record<string, number>> = {
  PullRequestDoesNotExistException: 404,
  InvalidPullRequestIdException: 404,
  RepositoryDoesNotExistException: 404,
  ThrottlingException: 429,
  TooManyRequestsException: 429,
  AccessDeniedException: 403,
  UnrecognizedClientException: 401,
  InvalidSignatureException: 401,
  ExpiredTokenException: 401
}

/** An AWS SDK error: a service exception (`$metadata`) or the credential chain finding nothing. */
const failure = (error: unknown): ServiceFailure | undefined => {
  if (!(error instanceof Error)) return undefined
  if (error.name === "CredentialsProviderError")
    return { status: 401, headers: {}, message: undefined, noCredential: true }
  const metadata = (error as { readonly $metadata?: { readonly httpStatusCode?: number } }).$metadata
  const status = statuses[error.name] ?? metadata?.httpStatusCode
  if (status === undefined || metadata === undefined) return undefined
  return { status, headers: {}, message: error.message }
}

/** AWS CodeCommit's `GetPullRequest`, signed by the AWS SDK's chain for the profile; `at.host` is the region. */
export const lookupCodeCommit = (
  at: PullRequestLocation,
  endpoint: string | undefined,
  hints: Hints
): Effect.Effect<PullRequestLookup> =>
  askService(at, hints, {
    ask: async (signal) => {
      // Loaded on the first CodeCommit lookup: an idle daemon never loads the SDK.
      const { CodeCommitClient, GetPullRequestCommand } = await import("@aws-sdk/client-codecommit")
      const client = new CodeCommitClient({
        region: at.host,
        ...(at.profile === undefined ? {} : { profile: at.profile }),
        ...(endpoint === undefined ? {} : { endpoint }),
        maxAttempts: 1
      })
      try {
        const output = await client.send(new GetPullRequestCommand({ pullRequestId: String(at.pullRequest) }), {
          abortSignal: signal
        })
        return output.pullRequest ?? {}
      } finally {
        client.destroy()
      }
    },
    known: (pull) => fromCodeCommit(pull, at.repository),
    failure
  })
