import { Sandbox } from "@prbox/domain"
import { Result, Schema, type SchemaIssue } from "effect"
import { RowDecodeError } from "../SandboxRepo.ts"

/** The columns of a sandbox row, in the order every SELECT names them. */
export const SANDBOX_COLUMNS = [
  "id",
  "provider",
  "host",
  "account",
  "repository",
  "pull_request",
  "title",
  "source_branch",
  "source_commit",
  "access_password",
  "workspace_path",
  "container_id",
  "host_port",
  "status",
  "detail",
  "error",
  "setup_error",
  "environment",
  "environment_plan",
  "created_at",
  "last_activity_at",
  "stopped_at",
  "legacy_retired_at",
  "destroy_fenced",
  "author",
  "pull_request_state",
  "base_ref",
  "closed_seen_at",
  "engine",
  "remote_url"
] as const

type SandboxColumn = (typeof SANDBOX_COLUMNS)[number]
export type RawRow = { readonly [C in string]?: unknown }
export type ColumnValues = { readonly [C in SandboxColumn]: string | number | null }

// Works on the schema's encoded form, so the schema decides how the password
// is stored (its plain value) and every field is checked before a write.
const toColumns = (row: typeof Sandbox.Encoded): ColumnValues => ({
  id: row.id,
  provider: row.provider,
  host: row.host,
  account: row.account,
  repository: row.repository,
  pull_request: row.pullRequest,
  title: row.title,
  source_branch: row.sourceBranch,
  source_commit: row.sourceCommit,
  access_password: row.accessPassword,
  workspace_path: row.workspacePath,
  container_id: row.containerId,
  host_port: row.hostPort,
  status: row.status,
  detail: row.detail,
  error: row.error,
  setup_error: row.setupError,
  environment: json(row.environment),
  environment_plan: json(row.environmentPlan),
  created_at: row.createdAt,
  last_activity_at: row.lastActivityAt,
  stopped_at: row.stoppedAt,
  legacy_retired_at: row.legacyRetiredAt,
  // SQLite has no boolean.
  destroy_fenced: row.destroyFenced ? 1 : 0,
  author: row.author,
  pull_request_state: row.pullRequestState,
  base_ref: row.baseRef,
  closed_seen_at: row.closedSeenAt,
  engine: row.engine,
  remote_url: row.remoteUrl
})

const json = (value: unknown): string | null => (value === null ? null : JSON.stringify(value))

// Text that is not JSON is left as it is, for the schema to reject.
const parsed = (value: unknown): unknown => {
  if (typeof value !== "string") return value
  try {
    return JSON.parse(value)
  } catch {
    return value
  }
}

// Only 0 and 1 become booleans: anything else is left for the schema to reject.
const fenceFlag = (value: unknown): unknown => (value === 0 ? false : value === 1 ? true : value)

const fromColumns = (raw: RawRow): unknown => ({
  id: raw.id,
  provider: raw.provider,
  host: raw.host,
  account: raw.account,
  repository: raw.repository,
  pullRequest: raw.pull_request,
  title: raw.title,
  sourceBranch: raw.source_branch,
  sourceCommit: raw.source_commit,
  accessPassword: raw.access_password,
  workspacePath: raw.workspace_path,
  containerId: raw.container_id,
  hostPort: raw.host_port,
  status: raw.status,
  detail: raw.detail,
  error: raw.error,
  setupError: raw.setup_error,
  environment: parsed(raw.environment),
  environmentPlan: parsed(raw.environment_plan),
  createdAt: raw.created_at,
  lastActivityAt: raw.last_activity_at,
  stoppedAt: raw.stopped_at,
  legacyRetiredAt: raw.legacy_retired_at,
  destroyFenced: fenceFlag(raw.destroy_fenced),
  author: raw.author,
  pullRequestState: raw.pull_request_state,
  baseRef: raw.base_ref,
  closedSeenAt: raw.closed_seen_at,
  engine: raw.engine,
  remoteUrl: raw.remote_url
})

// Schema messages can quote the offending value (with `reportInput`, even
// through the standard formatters), and the value may be the password: the
// summary is built from the issue tree's paths and kinds only.
const problems: { readonly [Tag in Exclude<SchemaIssue.Issue["_tag"], "Pointer" | "Composite">]: string } = {
  AnyOf: "matches none of the allowed values",
  OneOf: "matches more than one allowed value",
  InvalidType: "has the wrong type",
  InvalidValue: "has an invalid value",
  MissingKey: "is missing",
  UnexpectedKey: "is unexpected",
  Forbidden: "is forbidden",
  Filter: "failed a check",
  Encoding: "could not be converted"
}

const issueLines = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): Array<string> => {
  switch (issue._tag) {
    case "Pointer":
      return issueLines(issue.issue, [...path, ...issue.path])
    case "Composite":
      return issue.issues.flatMap((inner) => issueLines(inner, path))
    default:
      return [`${path.length === 0 ? "row" : path.map(String).join(".")} ${problems[issue._tag]}`]
  }
}

/** A schema failure in words that never quote a value: the paths and kinds of its issues. */
export const safeSummary = (error: Schema.SchemaError): string => issueLines(error.issue, []).join("; ")

const decodeSandbox = Schema.decodeUnknownResult(Sandbox)
const encodeSandbox = Schema.encodeUnknownResult(Sandbox)

/**
 * Synchronous on purpose: it runs inside better-sqlite3 transactions, which
 * must not yield to other fibers sharing the connection.
 */
export const decodeRow = (operation: string, raw: RawRow): Result.Result<Sandbox, RowDecodeError> =>
  Result.mapError(
    decodeSandbox(fromColumns(raw)),
    (error) => new RowDecodeError({ operation, rowId: String(raw.id), detail: safeSummary(error) })
  )

/** The columns to store for a row built in code; a row that would not decode again is refused. */
export const encodeRow = (operation: string, row: Sandbox): Result.Result<ColumnValues, RowDecodeError> =>
  Result.mapBoth(encodeSandbox(row), {
    onFailure: (error) => new RowDecodeError({ operation, rowId: row.id, detail: safeSummary(error) }),
    onSuccess: toColumns
  })
