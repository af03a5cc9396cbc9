import { Provider, PullRequestNumber } from "@prbox/domain"
import { Result, Schema } from "effect"
import { InvalidPullRequestRef } from "./Errors.ts"
import { locate, locateInput } from "./Locate.ts"
import { codeCommit, isProfile, providerHeadRefs, type Refused, type Target } from "./Providers.ts"
import { redactCredentials } from "./Redact.ts"
import { isSafeRefName } from "./RefName.ts"

/** A pull request, located: what it is (the key's parts) and how git reaches it. */
export const PullRequestRef = Schema.Struct({
  provider: Provider,
  /** github.com, a GitHub Enterprise / GitLab / Bitbucket host, a CodeCommit region, or "local". */
  host: Schema.String,
  /** "o/r", "g/sub/r", a CodeCommit repository name, or a plain remote's path. */
  repository: Schema.String,
  pullRequest: PullRequestNumber,
  /** What git fetches from; never carries a credential. */
  remoteUrl: Schema.String,
  /** The remote ref holding the pull request's head commit. */
  headRef: Schema.String,
  /** The named credentials profile (CodeCommit: the AWS profile, also part of `remoteUrl`). */
  profile: Schema.optionalKey(Schema.String),
  webUrl: Schema.optionalKey(Schema.String)
})
export type PullRequestRef = typeof PullRequestRef.Type

/**
 * A pull request whose head only its hosting service can name: Bitbucket
 * Cloud and CodeCommit publish no pull request refs over git, and no `--ref`
 * was given. The open asks the service for the source branch (`withSourceBranch`).
 */
export interface PullRequestAtService extends Omit<PullRequestRef, "headRef"> {
  readonly headFromService: true
}

/** What `prbox open` names: a ref git can fetch, or one whose head the service names. */
export type PullRequestTarget = PullRequestRef | PullRequestAtService

export const isHeadFromService = (target: PullRequestTarget): target is PullRequestAtService =>
  "headFromService" in target

export interface ParseOptions {
  /** `--pr N`: required for a plain git URL or path, must agree with a pull request URL. */
  readonly pr?: number
  /** `--ref`: the ref to fetch instead of the provider's; a bare name means a branch. */
  readonly ref?: string
  readonly profile?: string
  /** The head ref of a plain git remote, `{n}` standing for the number. */
  readonly refPattern?: string
}

export const defaultRefPattern = "refs/pull/{n}/head"

/**
 * Reads `prbox open`'s argument. Pure: no I/O (a relative path is resolved
 * against the current directory). Accepted forms:
 * - `https://github.com/o/r/pull/N`, and the same path on any other host (GitHub Enterprise);
 * - `https://gitlab.example.com/g/sub/r/-/merge_requests/N`;
 * - `https://bitbucket.org/w/r/pull-requests/N` and Bitbucket Server's `/projects/P/repos/r/pull-requests/N`;
 * - `https://<region>.console.aws.amazon.com/codesuite/codecommit/repositories/<repo>/pull-requests/N`
 *   and `codecommit::<region>://[profile@]<repo>` with `--pr N`;
 * - `owner/repo#N` for github.com;
 * - any other git URL or local path with `--pr N` (and `--ref`, or the ref pattern).
 *
 * Bitbucket Cloud and CodeCommit publish no pull request refs over git:
 * without `--ref` their head comes from the hosting service.
 */
export const parsePullRequestTarget = (
  input: string,
  options: ParseOptions = {}
): Result.Result<PullRequestTarget, InvalidPullRequestRef> => {
  const text = input.trim()
  const outcome = parse(text, options)
  return "reason" in outcome ? refuse(text, outcome.reason) : Result.succeed(outcome)
}

/** The same, for callers that fetch at once: a head only the service names is refused. */
export const parsePullRequestRef = (
  input: string,
  options: ParseOptions = {}
): Result.Result<PullRequestRef, InvalidPullRequestRef> =>
  Result.flatMap(parsePullRequestTarget(input, options), (target) =>
    isHeadFromService(target)
      ? refuse(
          input.trim(),
          `${target.provider} does not publish pull request refs over git; pass --ref <source branch>`
        )
      : Result.succeed(target)
  )

/**
 * The ref to fetch for a pull request whose head the service named: its
 * source branch, from the fork's clone URL when it has one (https, no
 * credential: git's own credential helpers authenticate).
 */
export const withSourceBranch = (
  target: PullRequestAtService,
  sourceBranch: string,
  sourceCloneUrl: string | null
): Result.Result<PullRequestRef, InvalidPullRequestRef> => {
  const { headFromService: _, ...rest } = target
  const headRef = `refs/heads/${sourceBranch}`
  if (sourceBranch.startsWith("-") || !isSafeRefName(headRef)) {
    return refuse(
      target.webUrl ?? target.remoteUrl,
      "the hosting service names a source branch that is not a valid ref"
    )
  }
  if (sourceCloneUrl === null) return Result.succeed({ ...rest, headRef })
  const fork = locate(sourceCloneUrl)
  if ("reason" in fork || !sourceCloneUrl.startsWith("https://")) {
    return refuse(target.webUrl ?? target.remoteUrl, "the hosting service names a fork clone URL that is not https")
  }
  return Result.succeed({ ...rest, remoteUrl: sourceCloneUrl, headRef })
}

const refuse = (input: string, reason: string) =>
  Result.fail(new InvalidPullRequestRef({ input: redactCredentials(input), reason }))

const needsNumber = "pass the pull request number with --pr N"

const parse = (text: string, options: ParseOptions): PullRequestTarget | Refused => {
  const target = locateInput(text)
  return "reason" in target ? target : settle(target, options)
}

const settle = (target: Target, options: ParseOptions): PullRequestTarget | Refused => {
  if (options.pr !== undefined && !(Number.isSafeInteger(options.pr) && options.pr > 0)) {
    return { reason: "--pr must be a positive whole number" }
  }
  if (target.number !== undefined && options.pr !== undefined && options.pr !== target.number) {
    return { reason: `--pr ${options.pr} disagrees with #${target.number} in the URL` }
  }
  const n = target.number ?? options.pr
  if (n === undefined)
    return { reason: target.provider === "git" ? `not a pull request URL; ${needsNumber}` : needsNumber }
  if (options.profile !== undefined && !isProfile(options.profile)) return { reason: "invalid profile name" }
  if (target.profile !== undefined && options.profile !== undefined && target.profile !== options.profile) {
    return { reason: `--profile ${options.profile} disagrees with ${target.profile}@ in the URL` }
  }
  const profile = target.profile ?? options.profile
  // git-remote-codecommit reads the profile from the URL.
  const remoteUrl =
    target.provider === "codecommit" && target.profile === undefined && profile !== undefined
      ? codeCommit(target.host, target.repository, profile).remoteUrl
      : target.remoteUrl
  const headRef = settleHeadRef(target, n, options)
  if (typeof headRef === "object") return headRef
  const located = {
    provider: target.provider,
    host: target.host,
    repository: target.repository,
    pullRequest: PullRequestNumber.make(n),
    remoteUrl,
    ...(profile === undefined ? {} : { profile }),
    ...(target.webUrl === undefined ? {} : { webUrl: target.webUrl(n) })
  }
  return headRef === undefined ? { ...located, headFromService: true } : { ...located, headRef }
}

/** The head ref to fetch; undefined when only the hosting service can name it. */
const settleHeadRef = (target: Target, n: number, options: ParseOptions): string | undefined | Refused => {
  if (options.ref !== undefined) {
    const ref = options.ref.startsWith("refs/") ? options.ref : `refs/heads/${options.ref}`
    return !options.ref.startsWith("-") && isSafeRefName(ref)
      ? ref
      : { reason: "--ref is not a valid ref name (no '..', '@{', ':', spaces or control characters)" }
  }
  if (target.headRef !== undefined) return target.headRef(n)
  if (target.provider !== "git") return undefined
  const pattern = options.refPattern ?? defaultRefPattern
  const ref = pattern.replaceAll("{n}", String(n))
  return pattern.includes("{n}") && isSafeRefName(ref)
    ? ref
    : { reason: "the ref pattern must be a valid ref name containing {n}" }
}

/** What a sandbox row records of its pull request. */
export interface PullRequestOfRow {
  readonly provider: Provider
  readonly host: string | null
  readonly repository: string
  readonly pullRequest: PullRequestNumber
}

/**
 * An existing sandbox's pull request, located again: its key from the row,
 * its remote as recorded at open (never the workspace's `origin`, which the
 * sandbox can rewrite), its head ref from the provider
 * (a plain remote's from the ref pattern). A PR opened with `--ref` (Bitbucket
 * Cloud, CodeCommit) has no ref to find again and is refused.
 */
export const pullRequestRefOf = (
  row: PullRequestOfRow,
  remoteUrl: string,
  refPattern: string = defaultRefPattern
): Result.Result<PullRequestRef, InvalidPullRequestRef> => {
  const refused = (reason: string) =>
    Result.fail(new InvalidPullRequestRef({ input: redactCredentials(remoteUrl), reason }))
  if (row.host === null) return refused("the sandbox records no host; open the PR again")
  const n = row.pullRequest
  const headRef =
    row.provider === "github"
      ? providerHeadRefs.github(n)
      : row.provider === "gitlab"
        ? providerHeadRefs.gitlab(n)
        : row.provider === "bitbucket" && row.host !== "bitbucket.org"
          ? providerHeadRefs.bitbucketServer(n)
          : row.provider === "git"
            ? refPattern.replaceAll("{n}", String(n))
            : undefined
  if (headRef === undefined || !isSafeRefName(headRef) || (row.provider === "git" && !refPattern.includes("{n}"))) {
    return refused(`no pull request ref to fetch for ${row.provider} (opened with --ref?); open the PR again instead`)
  }
  return Result.succeed({
    provider: row.provider,
    host: row.host,
    repository: row.repository,
    pullRequest: n,
    remoteUrl: remoteUrl,
    headRef
  })
}
