import { Schema } from "effect"
import { EnvironmentPlan, SandboxEnvironment } from "./Environment.ts"
import { HostPort, PullRequestNumber, SandboxId, Timestamp } from "./Ids.ts"
import { PullRequestState } from "./PullRequestInfo.ts"
import { Provider } from "./PullRequestKey.ts"
import { SandboxStatus } from "./SandboxStatus.ts"
import { isTerminal } from "./Vocabulary.ts"

/**
 * One sandbox row. `host` and `accessPassword` are null only in rows written
 * by schema v1 (legacy); current code always sets both.
 */
export const Sandbox = Schema.Struct({
  id: SandboxId,
  provider: Provider,
  host: Schema.NullOr(Schema.String),
  account: Schema.String,
  repository: Schema.String,
  pullRequest: PullRequestNumber,
  /** The last title, author, state and base branch the hosting service gave; null while unknown. */
  title: Schema.NullOr(Schema.String),
  author: Schema.NullOr(Schema.String),
  pullRequestState: Schema.NullOr(PullRequestState),
  baseRef: Schema.NullOr(Schema.String),
  /** When the PR was first seen merged or closed (the grace of `deleteWhenClosed` runs from it); null while open or unknown. */
  closedSeenAt: Schema.NullOr(Timestamp),
  sourceBranch: Schema.NullOr(Schema.String),
  sourceCommit: Schema.NullOr(Schema.String),
  accessPassword: Schema.NullOr(Schema.RedactedFromValue(Schema.String)),
  workspacePath: Schema.NullOr(Schema.String),
  containerId: Schema.NullOr(Schema.String),
  hostPort: Schema.NullOr(HostPort),
  status: SandboxStatus,
  detail: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  /**
   * Why the last setup of this container stopped early (the failed step), or
   * null. The sandbox still runs: the user gets in to fix it.
   */
  setupError: Schema.NullOr(Schema.String),
  /** The environment the sandbox got; null until its image is known (and on rows older than schema v5). */
  environment: Schema.NullOr(SandboxEnvironment),
  /** What its container is made from (internal: not in the API's view). */
  environmentPlan: Schema.NullOr(EnvironmentPlan),
  createdAt: Timestamp,
  lastActivityAt: Timestamp,
  stoppedAt: Schema.NullOr(Timestamp),
  legacyRetiredAt: Schema.NullOr(Timestamp),
  destroyFenced: Schema.Boolean,
  /** The Docker engine the sandbox lives on (its configured address); null: the local engine (rows before v8). */
  engine: Schema.NullOr(Schema.String),
  /**
   * The remote the PR was fetched from at open, without credentials: what
   * `update` fetches again (internal: never read back from the workspace,
   * which the sandbox can write). Null on rows before v9.
   */
  remoteUrl: Schema.NullOr(Schema.String)
})
export type Sandbox = typeof Sandbox.Type

/**
 * Where a row stands with respect to legacy retirement:
 * - `current`: written by the current schema, nothing to do;
 * - `unauthenticated`: v1 row without an access password, to be stopped and marked in error;
 * - `pending`: authenticated v1 row without a host, not yet retired;
 * - `interrupted`: marked retiring but the final `stopped` write never happened;
 * - `retired`: done; it can never be restarted.
 */
export type RetirementState = "current" | "unauthenticated" | "pending" | "interrupted" | "retired"

export const retirementState = (
  row: Pick<Sandbox, "host" | "accessPassword" | "legacyRetiredAt" | "status">
): RetirementState => {
  if (row.legacyRetiredAt !== null) return row.status === "stopped" ? "retired" : "interrupted"
  if (row.accessPassword === null) return "unauthenticated"
  if (row.host === null) return "pending"
  return "current"
}

/** Why a row cannot be restarted, or undefined when it can. */
export const restartRefusal = (row: Sandbox): string | undefined => {
  if (row.legacyRetiredAt !== null) return "this legacy sandbox was retired; open the PR again to create a replacement"
  if (row.accessPassword === null) return "this legacy sandbox has no access password; delete and recreate it"
  if (row.destroyFenced) return "an earlier destroy of this sandbox was not confirmed; run `prbox rm` to retry it"
  // Without a container (never created, or gone), a restart provisions one on the workspace.
  if (row.workspacePath === null) return "this sandbox has no workspace; open the PR again"
  if (!isTerminal(row.status)) return `this sandbox is ${row.status}`
  return undefined
}
