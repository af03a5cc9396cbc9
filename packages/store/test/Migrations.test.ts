import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { PullRequestNumber, type Sandbox, SandboxId, type SandboxStatus } from "@prbox/domain"
import type Database from "better-sqlite3"
import { Effect, Redacted } from "effect"
import {
  latestVersion,
  V1_SCHEMA,
  V2_SCHEMA,
  V3_SCHEMA,
  V4_SCHEMA,
  V5_SCHEMA,
  VERSION_TABLE
} from "../src/Migrations.ts"
import {
  assertTag,
  databaseIn,
  freshStateDir,
  newSandbox,
  openRepo,
  openStore,
  progressEntry,
  rawDatabase,
  withRepo
} from "./support.ts"

/** Rows as a v1 prbox wrote them: no host, a password only on some. */
const legacyRows = [
  {
    id: "legacy000001",
    provider: "github",
    account: "",
    repository: "acme/widgets",
    pull_request: 7,
    title: "Old and unauthenticated",
    source_branch: "feature",
    source_commit: "1111111",
    access_password: null,
    workspace_path: "/state/workspaces/legacy000001",
    container_id: "c-legacy-1",
    host_port: 8101,
    status: "running",
    detail: "ready",
    error: null,
    created_at: 100,
    last_activity_at: 150,
    stopped_at: null
  },
  {
    id: "legacy000002",
    provider: "codecommit",
    account: "default",
    repository: "infra",
    pull_request: 3,
    title: null,
    source_branch: null,
    source_commit: null,
    access_password: "legacy-secret",
    workspace_path: null,
    container_id: "c-legacy-2",
    host_port: null,
    status: "stopped",
    detail: null,
    error: null,
    created_at: 200,
    last_activity_at: 250,
    stopped_at: 260
  },
  {
    id: "legacy000003",
    provider: "gitlab",
    account: "team",
    repository: "group/app",
    pull_request: 11,
    title: "Failed",
    source_branch: "b",
    source_commit: "3333333",
    access_password: "another-secret",
    workspace_path: null,
    container_id: null,
    host_port: null,
    status: "error",
    detail: "cloning",
    error: "clone failed",
    created_at: 300,
    last_activity_at: 300,
    stopped_at: null
  }
] as const

/** Builds a database at `version` (1 or 2) from the same DDL the migration list ships, with the v1 rows. */
const writeOldDatabase = (path: string, version: 1 | 2, log: ReadonlyArray<readonly [string, number, string]>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const raw = yield* rawDatabase(path)
      raw.exec(VERSION_TABLE)
      raw.exec(V1_SCHEMA)
      raw.prepare("INSERT INTO schema_version (version) VALUES (1)").run()
      const columns = Object.keys(legacyRows[0])
      const insert = raw.prepare(
        `INSERT INTO sandboxes (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`
      )
      for (const row of legacyRows) insert.run(row)
      if (version === 2) {
        raw.exec(V2_SCHEMA)
        raw.prepare("INSERT INTO schema_version (version) VALUES (2)").run()
      }
      const append = raw.prepare("INSERT INTO sandbox_log (sandbox_id, at, line) VALUES (?, ?, ?)")
      for (const entry of log) append.run(...entry)
    })
  )

const writeV1Database = (path: string) =>
  writeOldDatabase(path, 1, [
    ["legacy000001", 101, "cloning"],
    ["legacy000002", 201, "starting"],
    ["legacy000001", 102, "ready"]
  ])

/**
 * A v2 log as the v2 engine wrote it: status changes as `status: X` or
 * `status: X (error)` text, progress lines in between, and the numbers of a
 * deleted sandbox's log above all of them.
 */
const writeV2Database = (path: string) =>
  Effect.gen(function* () {
    yield* writeOldDatabase(path, 2, [
      ["legacy000001", 101, "opening github.com/acme/widgets#7"],
      ["legacy000001", 102, "status: cloning"],
      ["legacy000003", 301, "status: cloning"],
      ["legacy000001", 103, "Cloning into 'workspace'..."],
      ["legacy000001", 104, "status: starting"],
      ["legacy000001", 105, "[1/1] npm ci"],
      ["legacy000001", 106, "status: running is what the app printed"],
      ["legacy000003", 302, "status: error (clone failed (exit 128))"],
      ["legacy000001", 107, "status: running"],
      ["legacy000001", 108, "status: paused"],
      ["gone00000001", 400, "status: cloning"]
    ])
    yield* Effect.scoped(
      Effect.map(rawDatabase(path), (raw) =>
        raw.prepare("DELETE FROM sandbox_log WHERE sandbox_id = 'gone00000001'").run()
      )
    )
  })

/** A v3 file: typed log entries, and rows from before a setup failure had a column. */
const writeV3Database = (path: string) =>
  Effect.gen(function* () {
    yield* writeOldDatabase(path, 2, [])
    yield* Effect.scoped(
      Effect.map(rawDatabase(path), (raw) => {
        raw.exec(V3_SCHEMA)
        raw.prepare("INSERT INTO schema_version (version) VALUES (3)").run()
        const append = raw.prepare(
          "INSERT INTO sandbox_log (sandbox_id, at, kind, status, line, error) VALUES (?, ?, ?, ?, ?, ?)"
        )
        append.run("legacy000001", 101, "progress", "starting", "[1/1] npm ci", null)
        append.run("legacy000001", 102, "status", "running", null, null)
        append.run("legacy000003", 301, "status", "error", null, "setup [1/1] failed with exit code 1")
      })
    )
  })

/** A v5 file: the v3 one taken through v4 and v5 as they shipped, from before settings had a table. */
const writeV5Database = (path: string) =>
  Effect.gen(function* () {
    yield* writeV3Database(path)
    yield* Effect.scoped(
      Effect.map(rawDatabase(path), (raw) => {
        raw.exec(V4_SCHEMA)
        raw.exec(V5_SCHEMA)
        raw.prepare("INSERT INTO schema_version (version) VALUES (4), (5)").run()
      })
    )
  })

const plain = (row: Sandbox) => ({
  ...row,
  accessPassword: row.accessPassword === null ? null : Redacted.value(row.accessPassword)
})

const expectedFromLegacy = (row: (typeof legacyRows)[number]): ReturnType<typeof plain> => ({
  id: SandboxId.make(row.id),
  provider: row.provider,
  host: null,
  account: row.account,
  repository: row.repository,
  pullRequest: PullRequestNumber.make(row.pull_request),
  title: row.title,
  sourceBranch: row.source_branch,
  sourceCommit: row.source_commit,
  accessPassword: row.access_password,
  workspacePath: row.workspace_path,
  containerId: row.container_id,
  hostPort: row.host_port,
  status: row.status,
  detail: row.detail,
  error: row.error,
  setupError: null,
  environment: null,
  environmentPlan: null,
  createdAt: row.created_at,
  lastActivityAt: row.last_activity_at,
  stoppedAt: row.stopped_at,
  legacyRetiredAt: null,
  destroyFenced: false,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  engine: null,
  remoteUrl: null
})

const schemaOf = (raw: Database.Database) =>
  raw.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all()

const versionsOf = (raw: Database.Database) =>
  raw.prepare("SELECT version FROM schema_version ORDER BY version").pluck().all()

/** A fresh state directory holding the file `write` builds, opened by the repository (which migrates it). */
const openWritten = (write: (path: string) => Effect.Effect<void>) =>
  Effect.gen(function* () {
    const stateDir = yield* freshStateDir
    mkdirSync(stateDir, { mode: 0o700 })
    yield* write(databaseIn(stateDir))
    return { stateDir, repo: yield* openRepo(stateDir) }
  })

describe("migrations", () => {
  it.effect("opening a v1 file migrates it in place, keeping every row, and its log lines as progress", () =>
    Effect.gen(function* () {
      const { stateDir, repo } = yield* openWritten(writeV1Database)
      const rows = yield* repo.findAll()
      assert.deepStrictEqual(rows.map(plain), [...legacyRows].reverse().map(expectedFromLegacy))
      const sandboxId = SandboxId.make("legacy000001")
      assert.deepStrictEqual(yield* repo.readLog(sandboxId, { limit: 10 }), [
        { _tag: "Progress", seq: 1, sandboxId, at: 101, status: "creating", line: "cloning" },
        { _tag: "Progress", seq: 3, sandboxId, at: 102, status: "creating", line: "ready" }
      ])
      // The file was written 0644 by plain SQLite; opening repaired it.
      assert.strictEqual(statSync(databaseIn(stateDir)).mode & 0o777, 0o600)
    })
  )

  it.effect("after migration the one-live-row rule includes the host and leaves legacy rows out", () =>
    Effect.gen(function* () {
      const { repo } = yield* openWritten(writeV1Database)
      // legacy000001 is live for github acme/widgets#7 (under the v1 index too).
      const replacement = newSandbox(1, { pullRequest: PullRequestNumber.make(7), account: "" })
      yield* repo.insert(replacement)
      const error = yield* Effect.flip(
        repo.insert(newSandbox(2, { pullRequest: PullRequestNumber.make(7), account: "" }))
      )
      assertTag(error, "LiveSandboxExists")
      assert.strictEqual(error.existingId, replacement.id)
      const pr = yield* repo.findByPr({
        provider: "github",
        repository: "acme/widgets",
        pullRequest: replacement.pullRequest
      })
      assert.deepStrictEqual(
        pr.map((row) => [row.id, row.host]),
        [
          [replacement.id, "github.com"],
          ["legacy000001", null]
        ]
      )
    })
  )

  it.effect("a v2 file's log becomes typed entries: its status lines status changes, the rest progress", () =>
    Effect.gen(function* () {
      const { repo } = yield* openWritten(writeV2Database)
      const first = SandboxId.make("legacy000001")
      const third = SandboxId.make("legacy000003")
      const changed = (sandboxId: SandboxId, seq: number, at: number, status: SandboxStatus, error: string | null) =>
        ({ _tag: "StatusChanged", seq, sandboxId, at, status, error }) as const
      const progress = (sandboxId: SandboxId, seq: number, at: number, status: SandboxStatus, line: string) =>
        ({ _tag: "Progress", seq, sandboxId, at, status, line }) as const
      assert.deepStrictEqual(yield* repo.readLog(first, { limit: 20 }), [
        // Before the first status change, a line belongs to `creating`.
        progress(first, 1, 101, "creating", "opening github.com/acme/widgets#7"),
        changed(first, 2, 102, "cloning", null),
        progress(first, 4, 103, "cloning", "Cloning into 'workspace'..."),
        changed(first, 5, 104, "starting", null),
        progress(first, 6, 105, "starting", "[1/1] npm ci"),
        // Only the exact old format was a status change.
        progress(first, 7, 106, "starting", "status: running is what the app printed"),
        changed(first, 9, 107, "running", null),
        progress(first, 10, 108, "running", "status: paused")
      ])
      assert.deepStrictEqual(yield* repo.readLog(third, { limit: 20 }), [
        changed(third, 3, 301, "cloning", null),
        changed(third, 8, 302, "error", "clone failed (exit 128)")
      ])
      // The deleted sandbox's number (11) is not handed out again.
      assert.strictEqual((yield* repo.appendLog(first, progressEntry(500, "after"))).seq, 12)
    })
  )

  it.effect("a v3 file gains the setup failure column: every row reads back without one, the log as it was", () =>
    Effect.gen(function* () {
      const { repo } = yield* openWritten(writeV3Database)
      const rows = yield* repo.findAll()
      assert.deepStrictEqual(rows.map(plain), [...legacyRows].reverse().map(expectedFromLegacy))
      const first = SandboxId.make("legacy000001")
      const third = SandboxId.make("legacy000003")
      assert.deepStrictEqual(yield* repo.readLog(first, { limit: 10 }), [
        { _tag: "Progress", seq: 1, sandboxId: first, at: 101, status: "starting", line: "[1/1] npm ci" },
        { _tag: "StatusChanged", seq: 2, sandboxId: first, at: 102, status: "running", error: null }
      ])
      assert.deepStrictEqual(yield* repo.readLog(third, { limit: 10 }), [
        {
          _tag: "StatusChanged",
          seq: 3,
          sandboxId: third,
          at: 301,
          status: "error",
          error: "setup [1/1] failed with exit code 1"
        }
      ])
      // The new column is written and read back.
      const failed = yield* repo.updateStatus(SandboxId.make("legacy000002"), {
        to: "stopped",
        setupError: "setup [1/1] failed"
      })
      assert.strictEqual(failed.setupError, "setup [1/1] failed")
    })
  )

  it.effect("a v5 file gains the settings table, empty; its rows are kept", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      mkdirSync(stateDir, { mode: 0o700 })
      yield* writeV5Database(databaseIn(stateDir))
      const { repo, settings } = yield* openStore(stateDir)
      assert.deepStrictEqual((yield* repo.findAll()).map(plain), [...legacyRows].reverse().map(expectedFromLegacy))
      assert.strictEqual(yield* settings.get("previewPort"), undefined)
      yield* settings.set("previewPort", "47100")
      assert.strictEqual(yield* settings.get("previewPort"), "47100")
    })
  )

  it.effect.each([
    { version: 1, write: writeV1Database },
    { version: 2, write: writeV2Database },
    { version: 3, write: writeV3Database },
    { version: 5, write: writeV5Database }
  ])("a migrated v$version file has exactly the schema of a new one, and reopening changes nothing", ({ write }) =>
    Effect.gen(function* () {
      const migratedDir = yield* freshStateDir
      mkdirSync(migratedDir, { mode: 0o700 })
      yield* write(databaseIn(migratedDir))
      yield* withRepo(migratedDir, () => Effect.void)
      yield* withRepo(migratedDir, () => Effect.void)
      const freshDir = yield* freshStateDir
      yield* withRepo(freshDir, () => Effect.void)
      const migrated = yield* rawDatabase(databaseIn(migratedDir), { readonly: true })
      const fresh = yield* rawDatabase(databaseIn(freshDir), { readonly: true })
      assert.deepStrictEqual(schemaOf(migrated), schemaOf(fresh))
      assert.deepStrictEqual(versionsOf(migrated), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
      assert.deepStrictEqual(versionsOf(fresh), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
      assert.strictEqual(latestVersion, 11)
      assert.strictEqual(migrated.prepare("SELECT count(*) FROM sandboxes").pluck().get(), legacyRows.length)
    })
  )

  it.effect("a v1 file whose writer died mid-transaction is rolled back to its last commit, then migrated", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      mkdirSync(stateDir, { mode: 0o700 })
      const db = databaseIn(stateDir)
      const writer = fileURLToPath(new URL("./fixtures/legacy-crash.ts", import.meta.url))
      const crashed = spawnSync(process.execPath, [writer, db, "20"], { encoding: "utf8" })
      assert.strictEqual(crashed.signal, "SIGKILL", crashed.stderr)
      assert.isTrue(existsSync(`${db}-journal`), "the writer left no hot journal")
      const repo = yield* openRepo(stateDir)
      const rows = yield* repo.findAll()
      assert.deepStrictEqual(
        rows.map((row) => row.id),
        Array.from({ length: 20 }, (_, i) => `legacy${String(20 - i).padStart(6, "0")}`)
      )
      assert.isTrue(rows.every((row) => row.host === null && row.legacyRetiredAt === null))
      assert.isFalse(existsSync(`${db}-journal`))
    })
  )
})
