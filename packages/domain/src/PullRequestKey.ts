import { Schema } from "effect"
import { PullRequestNumber } from "./Ids.ts"
import { PROVIDERS } from "./Vocabulary.ts"

export const Provider = Schema.Literals(PROVIDERS)
export type Provider = typeof Provider.Type

/**
 * What a sandbox belongs to: one pull request, reached through one account.
 * `host` is where the repository lives (a code host, or a CodeCommit region);
 * `account` is the discovered identity, or the profile name when discovery is
 * unavailable (see Account.ts).
 */
export const PullRequestKey = Schema.Struct({
  provider: Provider,
  host: Schema.String.check(Schema.isMinLength(1)),
  account: Schema.String,
  repository: Schema.String.check(Schema.isMinLength(1)),
  pullRequest: PullRequestNumber
})
export type PullRequestKey = typeof PullRequestKey.Type

/** A readable, unique rendering of a key, for logs and labels. */
export const formatPullRequestKey = (key: PullRequestKey): string =>
  `${key.provider}:${key.host}/${key.repository}#${key.pullRequest}${key.account === "" ? "" : ` (${key.account})`}`
