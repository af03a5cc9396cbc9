import { isLive, isTerminal, type Sandbox, SandboxStatus } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Result } from "effect"
import { LiveSandboxExists, type NewSandbox } from "../SandboxRepo.ts"
import { type ColumnValues, encodeRow, SANDBOX_COLUMNS } from "./Rows.ts"

// Derived from the domain so queries and the status machine agree on "live".
// The partial index in Migrations.ts spells the same set out, frozen with its migration.
export const TERMINAL_STATUSES = SandboxStatus.literals
  .filter(isTerminal)
  .map((status) => `'${status}'`)
  .join(", ")

/** A new row as `insert` stores it: `creating`, nothing of a container yet. */
export const newSandboxRow = (input: NewSandbox): Sandbox => ({
  id: input.id,
  provider: input.provider,
  host: input.host,
  account: input.account,
  repository: input.repository,
  pullRequest: input.pullRequest,
  title: input.title ?? null,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  sourceBranch: input.sourceBranch ?? null,
  sourceCommit: input.sourceCommit ?? null,
  accessPassword: input.accessPassword,
  workspacePath: input.workspacePath ?? null,
  containerId: null,
  hostPort: null,
  status: "creating",
  detail: input.detail ?? null,
  error: null,
  setupError: null,
  environment: null,
  environmentPlan: null,
  createdAt: input.createdAt,
  lastActivityAt: input.lastActivityAt,
  stoppedAt: null,
  legacyRetiredAt: null,
  destroyFenced: false,
  engine: input.engine ?? null,
  remoteUrl: input.remoteUrl ?? null
})

/**
 * A row's checked insert, for a caller inside a write transaction: the row
 * must encode, and no other live row may hold its pull request key.
 */
export const sandboxInserts = (db: Database.Database) => {
  const selectLiveHolder = db
    .prepare<[string, string, string, string, number, string], string>(
      `SELECT id FROM sandboxes
       WHERE provider = ? AND host = ? AND account = ? AND repository = ? AND pull_request = ?
         AND status NOT IN (${TERMINAL_STATUSES}) AND id <> ?`
    )
    .pluck()
  const insertRow = db.prepare<ColumnValues>(
    `INSERT INTO sandboxes (${SANDBOX_COLUMNS.join(", ")}) VALUES (${SANDBOX_COLUMNS.map((column) => `@${column}`).join(", ")})`
  )

  const checkLiveHolder = (operation: string, row: Sandbox): Result.Result<void, LiveSandboxExists> => {
    if (row.host === null || !isLive(row)) return Result.void
    const holder = selectLiveHolder.get(row.provider, row.host, row.account, row.repository, row.pullRequest, row.id)
    return holder === undefined ? Result.void : Result.fail(new LiveSandboxExists({ operation, existingId: holder }))
  }

  const insertChecked = (operation: string, row: Sandbox) =>
    Result.gen(function* () {
      const columns = yield* encodeRow(operation, row)
      yield* checkLiveHolder(operation, row)
      insertRow.run(columns)
      return row
    })

  return { checkLiveHolder, insertChecked }
}
