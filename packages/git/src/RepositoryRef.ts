import { Result } from "effect"
import { InvalidPullRequestRef } from "./Errors.ts"
import { locateInput } from "./Locate.ts"
import { codeCommit, isProfile } from "./Providers.ts"
import {
  type ParseOptions,
  type PullRequestRef,
  type PullRequestTarget,
  parsePullRequestTarget
} from "./PullRequestRef.ts"
import { redactCredentials } from "./Redact.ts"

/** A repository without a pull request: what `prbox prebuild <repository>` makes its base branch's prebuild of. */
export type RepositoryRef = Pick<PullRequestRef, "provider" | "host" | "repository" | "remoteUrl" | "profile">

/**
 * The host a repository URL names, spelled as a PR's host is (lower-case,
 * its default port and `www.` dropped: `locateInput`'s); undefined for a
 * local path or what is no remote prbox takes.
 */
export const repositoryHost = (url: string): string | undefined => {
  const located = locateInput(url.trim())
  return "reason" in located || located.host === "local" ? undefined : located.host
}

/** What `prbox prebuild` names: a pull request (its repository and base), or a repository (its default branch). */
export type PrebuildTarget =
  | { readonly _tag: "PullRequest"; readonly target: PullRequestTarget }
  | { readonly _tag: "Repository"; readonly repository: RepositoryRef }

/**
 * Reads `prbox prebuild`'s argument (pure). With `--pr`, or an input that
 * names a pull request (a PR URL, `owner/repo#N`), it is read as `prbox
 * open` reads it; otherwise as a repository: a repository URL of any host
 * (`https://github.com/o/r`, `https://gitlab.com/g/r`, an ssh or scp-like
 * remote) or a local path. `owner/repo` alone is a path, as for git.
 */
export const parsePrebuildTarget = (
  input: string,
  options: ParseOptions = {}
): Result.Result<PrebuildTarget, InvalidPullRequestRef> => {
  const text = input.trim()
  const located = locateInput(text)
  const refused = (reason: string) => Result.fail(new InvalidPullRequestRef({ input: redactCredentials(text), reason }))
  if ("reason" in located) return refused(located.reason)
  if (options.pr !== undefined || located.number !== undefined) {
    return Result.map(parsePullRequestTarget(text, options), (target) => ({ _tag: "PullRequest", target }) as const)
  }
  if (options.ref !== undefined) return refused("--ref names a pull request's head: pass --pr N with it")
  if (options.profile !== undefined && !isProfile(options.profile)) return refused("invalid profile name")
  const profile = located.profile ?? options.profile
  const repository: RepositoryRef = {
    provider: located.provider,
    host: located.host,
    repository: located.repository,
    // git-remote-codecommit reads the profile from the URL.
    remoteUrl:
      located.provider === "codecommit" && located.profile === undefined && profile !== undefined
        ? codeCommit(located.host, located.repository, profile).remoteUrl
        : located.remoteUrl,
    ...(profile === undefined ? {} : { profile })
  }
  return Result.succeed({ _tag: "Repository", repository })
}
