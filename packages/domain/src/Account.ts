import type { Provider } from "./PullRequestKey.ts"

/**
 * How a key's `account` was obtained. A discovered identity has the provider's
 * id shape (CodeCommit: a 12-digit AWS account id; GitHub/GitLab/Bitbucket: a
 * numeric owner id). Anything else is the configured profile name used as a
 * fallback while discovery is unavailable; an empty account is a fallback too.
 */
export type AccountKind = "discovered" | "profile" | "empty"

const discoveredShape: { readonly [P in Provider]: RegExp | undefined } = {
  codecommit: /^\d{12}$/,
  github: /^\d+$/,
  gitlab: /^\d+$/,
  bitbucket: /^\d+$/,
  // Plain git has no identity to discover.
  git: undefined
}

export const accountKind = (provider: Provider, account: string): AccountKind => {
  if (account === "") return "empty"
  return discoveredShape[provider]?.test(account) === true ? "discovered" : "profile"
}

/**
 * A profile name that could be read as a discovered id: keying a sandbox by it
 * would be indistinguishable from a discovered identity, so it is refused.
 */
export const isAmbiguousProfile = (provider: Provider, profile: string): boolean =>
  accountKind(provider, profile) === "discovered"

/** A row keyed by a fallback that the discovered identity supersedes. */
export const isSupersededBy = (rowAccount: string, discovered: string, profile: string): boolean =>
  rowAccount !== discovered && (rowAccount === "" || rowAccount === profile)
