/**
 * The schema history. A migration's SQL never changes once shipped: files in
 * the field were written by it. A fresh database runs every step, so it ends
 * with exactly the schema an upgraded one has.
 */

/** Which migrations a file has applied; created before the first one runs. */
export const VERSION_TABLE = "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY NOT NULL)"

/**
 * v1, the legacy shape: no host, a nullable access password, one live row per
 * (provider, account, repository, pull request).
 */
export const V1_SCHEMA = `
CREATE TABLE sandboxes (
  id TEXT PRIMARY KEY NOT NULL,
  provider TEXT NOT NULL,
  account TEXT NOT NULL,
  repository TEXT NOT NULL,
  pull_request INTEGER NOT NULL,
  title TEXT,
  source_branch TEXT,
  source_commit TEXT,
  access_password TEXT,
  workspace_path TEXT,
  container_id TEXT,
  host_port INTEGER,
  status TEXT NOT NULL,
  detail TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  stopped_at INTEGER
);
CREATE UNIQUE INDEX sandboxes_live_pr ON sandboxes (provider, account, repository, pull_request)
  WHERE status NOT IN ('stopped', 'error');
CREATE TABLE sandbox_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sandbox_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  line TEXT NOT NULL
);
CREATE INDEX sandbox_log_by_sandbox ON sandbox_log (sandbox_id, seq);
`

/**
 * v2, current: adds host, legacy retirement and the destroy fence. Existing
 * rows get NULL host and retirement, an unfenced flag and keep their
 * (possibly NULL) password, so the legacy pass can still recognise them. The
 * one-live-row rule now includes the host and leaves hostless rows out.
 */
export const V2_SCHEMA = `
ALTER TABLE sandboxes ADD COLUMN host TEXT;
ALTER TABLE sandboxes ADD COLUMN legacy_retired_at INTEGER;
ALTER TABLE sandboxes ADD COLUMN destroy_fenced INTEGER NOT NULL DEFAULT 0 CHECK (destroy_fenced IN (0, 1));
DROP INDEX sandboxes_live_pr;
CREATE UNIQUE INDEX sandboxes_one_live_per_pr ON sandboxes (provider, host, account, repository, pull_request)
  WHERE host IS NOT NULL AND status NOT IN ('stopped', 'error');
CREATE INDEX sandboxes_by_pr ON sandboxes (provider, repository, pull_request);
`

export interface Migration {
  readonly version: number
  readonly sql: string
}

/** In order; the last version is the one this build writes. */
export const migrations: ReadonlyArray<Migration> = [
  { version: 1, sql: V1_SCHEMA },
  { version: 2, sql: V2_SCHEMA }
]

export const latestVersion = migrations.reduce((latest, migration) => Math.max(latest, migration.version), 0)
