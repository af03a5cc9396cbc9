import type { PullRequestLookup, Sandbox } from "@prbox/domain"
import { isSafeBranchName, type PushTarget, repositoryHost } from "@prbox/git"

/** Where a push goes, or why it cannot go anywhere. */
export type Destination =
  | { readonly _tag: "To"; readonly target: PushTarget }
  | { readonly _tag: "Nowhere"; readonly reason: string }

const nowhere = (reason: string): Destination => ({ _tag: "Nowhere", reason })

/**
 * Where `prbox push` sends a sandbox's commits: `to` on the PR's own remote
 * (the row's, never the workspace's) when given; else the source
 * repository and branch the hosting service reports (a fork's only when it
 * does not say maintainers may not push there, only over https, and only on
 * the PR's own host: a service at a host a link named may answer anything,
 * and the user's credentials for another host must not follow it); a plain
 * git remote has no service to say, so it needs `to`.
 */
export const pushDestination = (
  row: Pick<Sandbox, "provider" | "host" | "remoteUrl">,
  to: string | undefined,
  lookup: PullRequestLookup | undefined
): Destination => {
  if (row.remoteUrl === null) return nowhere("it was opened before prbox recorded its PR's remote; open the PR again")
  if (to !== undefined) {
    return isSafeBranchName(to)
      ? { _tag: "To", target: { url: row.remoteUrl, branch: to } }
      : nowhere(`--to ${JSON.stringify(to)} is not a branch name git takes`)
  }
  if (row.provider === "git" || lookup === undefined) {
    return nowhere("a plain git remote has no hosting service to name the PR's branch: pass --to <branch>")
  }
  if (lookup._tag !== "Known") {
    const why = lookup._tag === "Missing" ? lookup.detail : lookup.reason
    return nowhere(
      `the hosting service did not say which branch the PR comes from (${why}); pass --to <branch> to push to a branch of the PR's repository`
    )
  }
  const { sourceBranch, sourceCloneUrl, maintainerCanModify } = lookup.info
  if (!isSafeBranchName(sourceBranch)) return nowhere("the hosting service names a source branch git does not take")
  if (sourceCloneUrl === null) return { _tag: "To", target: { url: row.remoteUrl, branch: sourceBranch } }
  if (maintainerCanModify === false) {
    return nowhere("the PR comes from a fork whose owner does not let maintainers push to its branch")
  }
  if (!sourceCloneUrl.startsWith("https://"))
    return nowhere("the hosting service names a fork that is not reached over https")
  // The service was asked at the row's host: only a fork there is followed.
  if (row.host === null || repositoryHost(sourceCloneUrl) !== row.host) {
    return nowhere(`the hosting service names a fork on another host than the PR's (${row.host ?? "none"})`)
  }
  return { _tag: "To", target: { url: sourceCloneUrl, branch: sourceBranch } }
}
