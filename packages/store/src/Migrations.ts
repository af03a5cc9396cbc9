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
 * v2: adds host, legacy retirement and the destroy fence. Existing
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

/**
 * v3: the log keeps what each entry is. A `status` row is a status change
 * (`status`, and the row's `error` then); a `progress` row is a line written
 * while the row was `status`. Clients switch on the kind, never on the text.
 *
 * The table is rebuilt (SQLite cannot add the checks to an existing one), and
 * the entries written before v3 are converted ONCE here. This is the only
 * place that reads meaning out of log text, and it reads only the format v1/v2
 * wrote for a status change: exactly `status: <status>` or
 * `status: <status> (<error>)`. Any other line (including one that merely
 * starts with `status: `) is a progress line, carrying the status of the last
 * status change before it in its sandbox's log (`creating` before the first),
 * which is what event replay showed for it before v3. The status list is the
 * one v1/v2 wrote, frozen with this migration. Sequence numbers are kept, and
 * so is the counter (seqs of deleted logs are never handed out again).
 */
export const V3_SCHEMA = `
DROP INDEX sandbox_log_by_sandbox;
ALTER TABLE sandbox_log RENAME TO sandbox_log_v2;
CREATE TABLE sandbox_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sandbox_id TEXT NOT NULL,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('status', 'progress')),
  status TEXT NOT NULL,
  line TEXT,
  error TEXT,
  CHECK (CASE kind WHEN 'status' THEN line IS NULL ELSE line IS NOT NULL AND error IS NULL END)
);
WITH
  split AS (
    SELECT seq, sandbox_id, at, line,
      substr(line, 1, 8) = 'status: ' AS prefixed,
      substr(line, 9) AS rest,
      instr(substr(line, 9), ' (') AS paren
    FROM sandbox_log_v2
  ),
  parsed AS (
    SELECT seq, sandbox_id, at, line, rest, paren,
      CASE WHEN prefixed THEN (CASE WHEN paren > 0 THEN substr(rest, 1, paren - 1) ELSE rest END) END AS word
    FROM split
  ),
  classified AS (
    SELECT seq, sandbox_id, at, line,
      CASE WHEN word IN ('creating', 'cloning', 'starting', 'running', 'stopping', 'stopped', 'error')
        THEN word END AS changed_to,
      CASE WHEN word IN ('creating', 'cloning', 'starting', 'running', 'stopping', 'stopped', 'error') AND paren > 0
        THEN substr(rest, paren + 2) END AS quoted
    FROM parsed
  ),
  numbered AS (
    SELECT *, count(changed_to) OVER (PARTITION BY sandbox_id ORDER BY seq) AS changes_so_far
    FROM classified
  )
INSERT INTO sandbox_log (seq, sandbox_id, at, kind, status, line, error)
SELECT seq, sandbox_id, at,
  CASE WHEN changed_to IS NULL THEN 'progress' ELSE 'status' END,
  coalesce(first_value(changed_to) OVER (PARTITION BY sandbox_id, changes_so_far ORDER BY seq), 'creating'),
  CASE WHEN changed_to IS NULL THEN line END,
  CASE WHEN substr(quoted, -1) = ')' THEN substr(quoted, 1, length(quoted) - 1) ELSE quoted END
FROM numbered
ORDER BY seq;
DELETE FROM sqlite_sequence WHERE name = 'sandbox_log';
INSERT INTO sqlite_sequence (name, seq) SELECT 'sandbox_log', seq FROM sqlite_sequence WHERE name = 'sandbox_log_v2';
DROP TABLE sandbox_log_v2;
CREATE INDEX sandbox_log_by_sandbox ON sandbox_log (sandbox_id, seq);
`

/**
 * v4: a setup step that fails no longer fails the sandbox. The row keeps
 * running and records the failure here; existing rows had no such failure.
 */
export const V4_SCHEMA = `
ALTER TABLE sandboxes ADD COLUMN setup_error TEXT;
`

/**
 * v5: the environment a sandbox got (shown to users) and the plan its
 * container was made from (kept so a restart or an update runs what the
 * create decided), both JSON. Existing rows ran the configured image.
 */
export const V5_SCHEMA = `
ALTER TABLE sandboxes ADD COLUMN environment TEXT;
ALTER TABLE sandboxes ADD COLUMN environment_plan TEXT;
`

/**
 * v6: the daemon's own settings, one value a key (the preview port chosen on
 * the first start, so its URLs stay the same across restarts).
 */
export const V6_SCHEMA = `
CREATE TABLE settings (
  key TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
`

/**
 * v7: agents' background jobs: what each ran and how it ended (its output
 * stays in the daemon's memory), so a restarted daemon reports them `lost`.
 */
export const V7_SCHEMA = `
CREATE TABLE jobs (
  job_id TEXT PRIMARY KEY NOT NULL,
  sandbox_id TEXT NOT NULL,
  argv TEXT NOT NULL,
  status TEXT NOT NULL,
  exit_code INTEGER,
  started_at INTEGER NOT NULL,
  ended_at INTEGER
);
CREATE INDEX jobs_by_sandbox ON jobs (sandbox_id, started_at);
`

/**
 * v8: what the hosting service last said of the PR (author, state, base
 * branch; the title had a column from v1) and when it was first seen closed;
 * and the Docker engine each sandbox lives on (null: the local engine).
 */
export const V8_SCHEMA = `
ALTER TABLE sandboxes ADD COLUMN author TEXT;
ALTER TABLE sandboxes ADD COLUMN pull_request_state TEXT;
ALTER TABLE sandboxes ADD COLUMN base_ref TEXT;
ALTER TABLE sandboxes ADD COLUMN closed_seen_at INTEGER;
ALTER TABLE sandboxes ADD COLUMN engine TEXT;
`

/**
 * v9: the remote each sandbox's PR was fetched from, so that `update`
 * fetches from what the user opened, never from the workspace's `origin`
 * (which the sandbox can rewrite). Older rows keep null.
 */
export const V9_SCHEMA = `
ALTER TABLE sandboxes ADD COLUMN remote_url TEXT;
`

/**
 * v10: prebuilds, a repository's base branch with its create-time steps
 * done, kept by their environment's content key (one row per prebuild; a
 * refresh of a key makes a new row, the old one removed once it is ready).
 */
export const V10_SCHEMA = `
CREATE TABLE prebuilds (
  id TEXT PRIMARY KEY NOT NULL,
  key TEXT NOT NULL,
  host TEXT NOT NULL,
  repository TEXT NOT NULL,
  base_branch TEXT NOT NULL,
  base_commit TEXT NOT NULL,
  image TEXT,
  volume TEXT,
  size_bytes INTEGER,
  state TEXT NOT NULL,
  error TEXT,
  started_at INTEGER NOT NULL,
  ready_at INTEGER,
  used_at INTEGER
);
CREATE INDEX prebuilds_by_key ON prebuilds (key, state, ready_at);
CREATE INDEX prebuilds_by_repository ON prebuilds (host, repository, started_at);
`

/**
 * v11: the warm pool, started containers of a ready prebuild waiting for a
 * PR of their environment key. A claim deletes the entry and inserts the
 * sandbox's row (same id, password, container, port) in one transaction.
 * `environment` and `environment_plan` are the sandbox row's, as JSON.
 */
export const V11_SCHEMA = `
CREATE TABLE warm_pool (
  id TEXT PRIMARY KEY NOT NULL,
  key TEXT NOT NULL,
  prebuild_id TEXT NOT NULL,
  base_commit TEXT NOT NULL,
  host TEXT NOT NULL,
  repository TEXT NOT NULL,
  state TEXT NOT NULL,
  container_id TEXT,
  host_port INTEGER,
  access_password TEXT NOT NULL,
  workspace_path TEXT NOT NULL,
  environment TEXT NOT NULL,
  environment_plan TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX warm_pool_by_key ON warm_pool (key, state, created_at);
`

export interface Migration {
  readonly version: number
  readonly sql: string
}

/** In order; the last version is the one this build writes. */
export const migrations: ReadonlyArray<Migration> = [
  { version: 1, sql: V1_SCHEMA },
  { version: 2, sql: V2_SCHEMA },
  { version: 3, sql: V3_SCHEMA },
  { version: 4, sql: V4_SCHEMA },
  { version: 5, sql: V5_SCHEMA },
  { version: 6, sql: V6_SCHEMA },
  { version: 7, sql: V7_SCHEMA },
  { version: 8, sql: V8_SCHEMA },
  { version: 9, sql: V9_SCHEMA },
  { version: 10, sql: V10_SCHEMA },
  { version: 11, sql: V11_SCHEMA }
]

export const latestVersion = migrations.reduce((latest, migration) => Math.max(latest, migration.version), 0)
