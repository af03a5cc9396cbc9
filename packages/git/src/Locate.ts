import * as NodePath from "node:path"
import {
  bitbucketCloud,
  bitbucketServer,
  codeCommit,
  githubAt,
  gitlab,
  isProfile,
  isRegion,
  type Refused,
  type Target
} from "./Providers.ts"

/*
 * Where `prbox open`'s argument points (provider, host, repository, remote
 * and, when the input says, the number), before the options settle it.
 */

const credentialsReason =
  "credentials in the URL are not accepted; remove them and let git use your credential helper or ssh-agent"
export const formsHint =
  "expected a pull request URL (GitHub …/pull/N, GitLab …/-/merge_requests/N, Bitbucket …/pull-requests/N, CodeCommit console), owner/repo#N, or a git URL or path with --pr N"

/** Where a trimmed input points; empty input, control characters and option-like text refused first. */
export const locateInput = (text: string): Target | Refused => {
  if (text === "") return { reason: `nothing to open; ${formsHint}` }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(text)) return { reason: "contains control characters" }
  if (text.startsWith("-")) return { reason: `looks like a command-line option; ${formsHint}` }
  return locate(text)
}

export const locate = (text: string): Target | Refused => {
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
