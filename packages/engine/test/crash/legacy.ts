import { join } from "node:path"
import Database from "better-sqlite3"
import { LEGACY_UNAUTHENTICATED } from "../../src/reconcile/LegacyPass.ts"

/**
 * Adds `count` rows to a schema v1 database (written by writeV1Database):
 * unauthenticated legacy rows already marked as the legacy pass leaves them,
 * so they make the migration large without giving reconcile work to do.
 */
export const addLegacyFiller = (home: string, repository: string, count: number): void => {
  const db = new Database(join(home, "prbox.db"))
  try {
    const insert = db.prepare(
      `INSERT INTO sandboxes (id, provider, account, repository, pull_request, title, access_password, status, error,
         created_at, last_activity_at, stopped_at)
       VALUES (?, 'git', '', ?, ?, ?, NULL, 'error', ?, ?, ?, ?)`
    )
    db.transaction(() => {
      for (let n = 1; n <= count; n++) {
        insert.run(
          `filler${String(n).padStart(6, "0")}`,
          repository,
          n + 1000,
          "t".repeat(400),
          LEGACY_UNAUTHENTICATED,
          n,
          n,
          n
        )
      }
    })()
  } finally {
    db.close()
  }
}

export interface DatabaseState {
  readonly integrity: string
  readonly schemaVersion: number
  readonly journalMode: string
  /** Ids of the rows with the destroy fence set (none before schema v2). */
  readonly fenced: ReadonlyArray<string>
  /** `status[/container]` of the rows of one PR, oldest first. */
  readonly prRows: ReadonlyArray<string>
}

/** The database as a read-only connection sees it (the WAL of a killed writer is left in place). */
export const readDatabase = (
  home: string,
  pullRequest: { readonly repository: string; readonly number: number }
): DatabaseState => {
  const db = new Database(join(home, "prbox.db"), { readonly: true, fileMustExist: true })
  try {
    const integrity = String(db.pragma("integrity_check", { simple: true }))
    const schemaVersion = Number(db.prepare("SELECT max(version) FROM schema_version").pluck().get() ?? 0)
    const journalMode = String(db.pragma("journal_mode", { simple: true }))
    const columns = db.prepare("SELECT name FROM pragma_table_info('sandboxes')").pluck().all()
    const fenced = columns.includes("destroy_fenced")
      ? db.prepare<[], string>("SELECT id FROM sandboxes WHERE destroy_fenced = 1").pluck().all()
      : []
    const prRows = db
      .prepare<[string, number], { status: string; container_id: string | null }>(
        "SELECT status, container_id FROM sandboxes WHERE repository = ? AND pull_request = ? ORDER BY rowid"
      )
      .all(pullRequest.repository, pullRequest.number)
      .map((row) => (row.container_id === null ? row.status : `${row.status}/container`))
    return { integrity, schemaVersion, journalMode, fenced, prRows }
  } finally {
    db.close()
  }
}
