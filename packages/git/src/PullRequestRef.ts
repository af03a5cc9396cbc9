import * as NodePath from "node:path"
import { Provider, PullRequestNumber } from "@prbox/domain"
import { Result, Schema } from "effect"
import { InvalidPullRequestRef } from "./Errors.ts"
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
 * - `https://bitbucket.org/w/r/pull-requests/N` (with `--ref <source branch>`: Bitbucket Cloud
 *   publishes no pull request refs) and Bitbucket Server's `/projects/P/repos/r/pull-requests/N`;
 * - `https://<region>.console.aws.amazon.com/codesuite/codecommit/repositories/<repo>/pull-requests/N`
 *   and `codecommit::<region>://[profile@]<repo>` with `--pr N` (both with `--ref <source branch>`);
 * - `owner/repo#N` for github.com;
 * - any other git URL or local path with `--pr N` (and `--ref`, or the ref pattern).
 */
export const parsePullRequestRef = (
  input: string,
  options: ParseOptions = {}
): Result.Result<PullRequestRef, InvalidPullRequestRef> => {
  const text = input.trim()
  const outcome = parse(text, options)
  return "reason" in outcome
    ? Result.fail(new InvalidPullRequestRef({ input: redactCredentials(text), reason: outcome.reason }))
    : Result.succeed(outcome)
}

interface Refused {
  readonly reason: string
}

/** Where an input points, before the options settle its number and head ref. */
interface Target {
  readonly provider: Provider
  readonly host: string
  readonly repository: string
  readonly remoteUrl: string
  readonly number?: number
  /** The provider's head ref; absent when its git server publishes none. */
  readonly headRef?: (n: number) => string
  readonly webUrl?: (n: number) => string
  readonly profile?: string
}

const credentialsReason =
  "credentials in the URL are not accepted; remove them and let git use your credential helper or ssh-agent"
const needsNumber = "pass the pull request number with --pr N"
const formsHint =
  "expected a pull request URL (GitHub …/pull/N, GitLab …/-/merge_requests/N, Bitbucket …/pull-requests/N, CodeCommit console), owner/repo#N, or a git URL or path with --pr N"

const parse = (text: string, options: ParseOptions): PullRequestRef | Refused => {
  if (text === "") return { reason: `nothing to open; ${formsHint}` }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(text)) return { reason: "contains control characters" }
  if (text.startsWith("-")) return { reason: `looks like a command-line option; ${formsHint}` }
  const target = locate(text)
  return "reason" in target ? target : settle(target, options)
}

const locate = (text: string): Target | Refused => {
  const shortForm = /^([A-Za-z0-9][A-Za-z0-9-]*)\/([A-Za-z0-9._-]+)#(.*)$/.exec(text)
  if (shortForm !== null) {
    const [, owner = "", repo = "", number = ""] = shortForm
    const n = parseNumber(number)
    if (n === undefined) return { reason: "the pull request number after # must be a positive whole number" }
    if (!isPathSegment(repo)) return { reason: "invalid repository name" }
    return { ...githubAt("https", "github.com", owner, repo.replace(/\.git$/, "")), number: n }
  }
  if (text.startsWith("codecommit:")) return codecommitRemote(text)
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(text)) {
    return { reason: "remote-helper transports (such as ext::) are not accepted; pass an https or ssh URL" }
  }
  if (/\s/.test(text) && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(text)) return { reason: "a URL cannot contain whitespace" }
  const url = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/.exec(text)
  if (url !== null) {
    const [, scheme = "", authority = "", path = "", query = "", fragment = ""] = url
    return fromUrl(text, scheme.toLowerCase(), authority, path, query, fragment)
  }
  if (text.includes("://")) return { reason: formsHint }
  if (/^[^/:@]+:[^/@]*@[^/:]+:/.test(text)) return { reason: credentialsReason }
  // git reads `[user@]host:path` with no slash before the colon as scp-like ssh.
  const scp = /^(?:([A-Za-z0-9_][A-Za-z0-9._-]*)@)?([A-Za-z0-9][A-Za-z0-9.-]*):(.+)$/.exec(text)
  if (scp !== null) {
    const [, , host = "", path = ""] = scp
    if (path.startsWith("-")) return { reason: "the repository path cannot start with -" }
    const segments = pathSegments(path)
    if (segments === undefined) return { reason: "the repository path has invalid or '..' segments" }
    return plainRemote(text, host.toLowerCase(), segments)
  }
  const absolute = NodePath.resolve(text)
  return { provider: "git", host: "local", repository: absolute, remoteUrl: absolute }
}

const fromUrl = (
  text: string,
  scheme: string,
  authority: string,
  path: string,
  query: string,
  fragment: string
): Target | Refused => {
  const at = authority.lastIndexOf("@")
  const userinfo = at === -1 ? "" : authority.slice(0, at)
  const hostPort = authority.slice(at + 1).toLowerCase()
  switch (scheme) {
    case "file": {
      if (hostPort !== "" && hostPort !== "localhost") return { reason: "a file:// URL must name a local path" }
      const decoded = decode(path)
      if (decoded === undefined || decoded === "") return { reason: "a file:// URL must name a local path" }
      const absolute = NodePath.resolve(decoded)
      return { provider: "git", host: "local", repository: absolute, remoteUrl: absolute }
    }
    case "https":
    case "http": {
      // A bare username may itself be a token (`https://<token>@host`).
      if (at !== -1) return { reason: credentialsReason }
      break
    }
    case "ssh":
    case "git+ssh":
    case "ssh+git":
    case "git": {
      if (userinfo.includes(":")) return { reason: credentialsReason }
      // ssh would read a user name starting with - as an option.
      if (at !== -1 && !/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(userinfo))
        return { reason: "invalid user name in the URL" }
      break
    }
    default:
      return { reason: `unsupported URL scheme ${scheme}://; ${formsHint}` }
  }
  const hostMatch = /^([a-z0-9][a-z0-9.-]*)(?::(\d{1,5}))?$/.exec(hostPort)
  if (hostMatch === null) return { reason: "the URL has no valid host" }
  const [, hostname = "", port] = hostMatch
  const defaultPort = (scheme === "https" && port === "443") || (scheme === "http" && port === "80")
  const host = (port === undefined || defaultPort ? hostname : `${hostname}:${port}`).replace(/^www\./, "")
  const segments = pathSegments(path)
  if (segments === undefined) return { reason: "the URL path has invalid or '..' segments" }
  if (scheme === "https" || scheme === "http") {
    const web = webPullRequest(scheme, host, segments, query)
    if (web !== undefined) return web
  }
  if (query !== "" || fragment !== "") return { reason: "a git URL cannot carry a query or fragment" }
  return plainRemote(text, host, segments)
}

/** A pull request page of a known host, or undefined when the URL is a plain remote. */
const webPullRequest = (
  scheme: string,
  host: string,
  segments: ReadonlyArray<string>,
  query: string
): Target | Refused | undefined => {
  const console = /^(?:([a-z]{2}(?:-[a-z]+)+-\d+)\.)?console\.aws\.amazon\.com$/.exec(host)
  if (console !== null) {
    const [codesuite, codecommit, repositories, repo = "", pullRequests, number = ""] = segments
    if (codesuite !== "codesuite" || codecommit !== "codecommit" || repositories !== "repositories") {
      return { reason: "not a CodeCommit pull request URL" }
    }
    if (pullRequests !== "pull-requests") return { reason: "the URL names no pull request (…/pull-requests/N)" }
    const region = console[1] ?? /[?&]region=([a-z0-9-]+)/.exec(query)?.[1]
    if (region === undefined || !isRegion(region)) return { reason: "the URL names no AWS region" }
    return withNumber(number, segments.length - 6, codeCommit(region, repo, undefined))
  }
  const dash = segments.indexOf("-")
  if (dash >= 2 && segments[dash + 1] === "merge_requests") {
    const repository = segments.slice(0, dash).join("/")
    return withNumber(segments[dash + 2] ?? "", segments.length - dash - 3, gitlab(scheme, host, repository))
  }
  const [first = "", second = "", kind, number = ""] = segments
  if (host === "bitbucket.org" && kind === "pull-requests") {
    return withNumber(number, segments.length - 4, bitbucketCloud(first, second))
  }
  if (first === "projects" && kind === "repos" && segments[4] === "pull-requests") {
    const [, project = "", , repo = "", , serverNumber = ""] = segments
    return withNumber(serverNumber, segments.length - 6, bitbucketServer(scheme, host, project, repo))
  }
  if (kind === "pull") return withNumber(number, segments.length - 4, githubAt(scheme, host, first, second))
  if (segments.some((segment) => ["pull", "pulls", "merge_requests", "pull-requests"].includes(segment))) {
    return { reason: `not a pull request URL this tool recognises; ${formsHint}` }
  }
  return undefined
}

/** A pull request page may go on with one tab (`/files`, `/diffs`, `/details`, ...). */
const withNumber = (number: string, extraSegments: number, target: Target): Target | Refused => {
  const n = parseNumber(number)
  if (n === undefined) return { reason: "missing or invalid pull request number in the URL" }
  if (extraSegments > 1) return { reason: `not a pull request URL this tool recognises; ${formsHint}` }
  return { ...target, number: n }
}

/** A clone URL, upgraded to its provider when the host is a well-known one. */
const plainRemote = (remoteUrl: string, host: string, segments: ReadonlyArray<string>): Target | Refused => {
  if (segments.length === 0) return { reason: "the URL names no repository" }
  const repository = segments.join("/").replace(/\.git$/, "")
  const [owner = "", repo = ""] = repository.split("/")
  const pair = segments.length === 2
  if (host === "github.com" && pair) return { ...githubAt("https", host, owner, repo), remoteUrl }
  if (host === "gitlab.com" && segments.length >= 2) return { ...gitlab("https", host, repository), remoteUrl }
  if (host === "bitbucket.org" && pair) return { ...bitbucketCloud(owner, repo), remoteUrl }
  return { provider: "git", host, repository, remoteUrl }
}

const codecommitRemote = (text: string): Target | Refused => {
  const match = /^codecommit::([^:/]+):\/\/(?:([^@/]+)@)?([^/@]+)$/.exec(text)
  if (match === null) {
    return text.startsWith("codecommit://")
      ? { reason: "include the region: codecommit::<region>://[profile@]<repository>" }
      : { reason: "expected codecommit::<region>://[profile@]<repository>" }
  }
  const [, region = "", profile, repo = ""] = match
  if (!isRegion(region)) return { reason: `${region} is not an AWS region` }
  if (profile !== undefined && !isProfile(profile)) return { reason: "invalid profile name" }
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(repo) || !isPathSegment(repo)) return { reason: "invalid repository name" }
  return codeCommit(region, repo, profile)
}

const githubAt = (scheme: string, host: string, owner: string, repo: string): Target => ({
  provider: "github",
  host,
  repository: `${owner}/${repo}`,
  remoteUrl: `${scheme}://${host}/${owner}/${repo}.git`,
  headRef: (n) => `refs/pull/${n}/head`,
  webUrl: (n) => `${scheme}://${host}/${owner}/${repo}/pull/${n}`
})

const gitlab = (scheme: string, host: string, repository: string): Target => ({
  provider: "gitlab",
  host,
  repository,
  remoteUrl: `${scheme}://${host}/${repository}.git`,
  headRef: (n) => `refs/merge-requests/${n}/head`,
  webUrl: (n) => `${scheme}://${host}/${repository}/-/merge_requests/${n}`
})

// Bitbucket Cloud's git server publishes branches only: no pull request refs.
const bitbucketCloud = (workspace: string, repo: string): Target => ({
  provider: "bitbucket",
  host: "bitbucket.org",
  repository: `${workspace}/${repo}`,
  remoteUrl: `https://bitbucket.org/${workspace}/${repo}.git`,
  webUrl: (n) => `https://bitbucket.org/${workspace}/${repo}/pull-requests/${n}`
})

const bitbucketServer = (scheme: string, host: string, project: string, repo: string): Target => ({
  provider: "bitbucket",
  host,
  repository: `${project}/${repo}`,
  remoteUrl: `${scheme}://${host}/scm/${project.toLowerCase()}/${repo}.git`,
  headRef: (n) => `refs/pull-requests/${n}/from`,
  webUrl: (n) => `${scheme}://${host}/projects/${project}/repos/${repo}/pull-requests/${n}`
})

// CodeCommit's git server publishes branches only: the source branch is fetched.
const codeCommit = (region: string, repo: string, profile: string | undefined): Target => ({
  provider: "codecommit",
  host: region,
  repository: repo,
  remoteUrl: `codecommit::${region}://${profile === undefined ? "" : `${profile}@`}${repo}`,
  webUrl: (n) =>
    `https://${region}.console.aws.amazon.com/codesuite/codecommit/repositories/${repo}/pull-requests/${n}/details?region=${region}`,
  ...(profile === undefined ? {} : { profile })
})

const settle = (target: Target, options: ParseOptions): PullRequestRef | Refused => {
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
  if (typeof headRef !== "string") return headRef
  return {
    provider: target.provider,
    host: target.host,
    repository: target.repository,
    pullRequest: PullRequestNumber.make(n),
    remoteUrl,
    headRef,
    ...(profile === undefined ? {} : { profile }),
    ...(target.webUrl === undefined ? {} : { webUrl: target.webUrl(n) })
  }
}

const settleHeadRef = (target: Target, n: number, options: ParseOptions): string | Refused => {
  if (options.ref !== undefined) {
    const ref = options.ref.startsWith("refs/") ? options.ref : `refs/heads/${options.ref}`
    return !options.ref.startsWith("-") && isSafeRefName(ref)
      ? ref
      : { reason: "--ref is not a valid ref name (no '..', '@{', ':', spaces or control characters)" }
  }
  if (target.headRef !== undefined) return target.headRef(n)
  if (target.provider !== "git") {
    return { reason: `${target.provider} does not publish pull request refs over git; pass --ref <source branch>` }
  }
  const pattern = options.refPattern ?? defaultRefPattern
  const ref = pattern.replaceAll("{n}", String(n))
  return pattern.includes("{n}") && isSafeRefName(ref)
    ? ref
    : { reason: "the ref pattern must be a valid ref name containing {n}" }
}

const parseNumber = (text: string): number | undefined => (/^[1-9]\d{0,9}$/.test(text) ? Number(text) : undefined)

const decode = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

const isPathSegment = (segment: string): boolean => {
  const decoded = /^[A-Za-z0-9._~+%@-]+$/.test(segment) ? decode(segment) : undefined
  return decoded !== undefined && decoded !== "." && decoded !== ".." && !decoded.includes("/")
}

/** The non-empty segments of a URL path, or undefined if one is unsafe. */
const pathSegments = (path: string): ReadonlyArray<string> | undefined => {
  const segments = path.split("/").filter((segment) => segment !== "")
  return segments.every(isPathSegment) ? segments : undefined
}

const isRegion = (region: string): boolean => /^[a-z]{2}(?:-[a-z]+)+-\d+$/.test(region)

const isProfile = (profile: string): boolean => /^[A-Za-z0-9_.+=,][A-Za-z0-9_.+=,-]*$/.test(profile)
