/**
 * The model's closed word lists as plain arrays, and what a status means.
 * The schemas are built from these lists; the CLI's fast path checks a
 * daemon's answer against them without loading effect, so this module
 * imports nothing.
 */

export const SANDBOX_STATUSES = ["creating", "cloning", "starting", "running", "stopping", "stopped", "error"] as const

/** Where a pull request lives. */
export const PROVIDERS = ["github", "gitlab", "bitbucket", "codecommit", "git"] as const

/** Where a pull request stands on its hosting service. */
export const PULL_REQUEST_STATES = ["open", "merged", "closed"] as const

/** Which source a sandbox's environment came from. */
export const ENVIRONMENT_KINDS = ["devcontainer", "config", "default"] as const

/** Why `prbox push` pushed nothing (each a clear message besides). */
export const PUSH_REFUSALS = [
  "no-new-commits",
  "not-fast-forward",
  "uncommitted-changes",
  "pull-request-moved",
  "lease-failed",
  "bundle",
  "malformed",
  "no-destination",
  "push-failed",
  "changed-since-shown"
] as const

/** Nothing is running and nothing will run without a new request. */
export const isTerminal = (status: (typeof SANDBOX_STATUSES)[number]): boolean =>
  status === "stopped" || status === "error"

/** Not finished: a live row blocks a second sandbox for its PR. */
export const isLive = (row: { readonly status: (typeof SANDBOX_STATUSES)[number] }): boolean => !isTerminal(row.status)
