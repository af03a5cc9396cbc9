import { type PullRequestState, statePaths } from "@prbox/domain"
import Database from "better-sqlite3"

/** What the hosting service said of a row's PR, as the row keeps it (schema v8). */
export interface PullRequestFields {
  readonly title: string | null
  readonly author: string | null
  readonly pullRequestState: PullRequestState | null
  readonly baseRef: string | null
  readonly closedSeenAt: number | null
}

/**
 * Writes those columns of row `id` straight into the database file of
 * `stateDir` (the store has no write of them for tests to call), so clients'
 * tests show titles and states without a hosting service.
 */
export const writePullRequestFields = (stateDir: string, id: string, fields: PullRequestFields): void => {
  const db = new Database(statePaths(stateDir).database, { fileMustExist: true })
  try {
    const changed = db
      .prepare(
        `UPDATE sandboxes SET title = ?, author = ?, pull_request_state = ?, base_ref = ?, closed_seen_at = ?
         WHERE id = ?`
      )
      .run(fields.title, fields.author, fields.pullRequestState, fields.baseRef, fields.closedSeenAt, id).changes
    if (changed !== 1) throw new Error(`no sandbox ${id} in ${stateDir}`)
  } finally {
    db.close()
  }
}
