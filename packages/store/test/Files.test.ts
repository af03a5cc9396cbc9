import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync
} from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  assertTag,
  databaseIn,
  freshStateDir,
  newSandbox,
  openRepo,
  progressEntry,
  rawDatabase,
  tempDir,
  withRepo
} from "./support.ts"

const modeOf = (path: string) => statSync(path).mode & 0o777
const isRoot = process.getuid?.() === 0
const OTHER_UID = 4242

/** Runs with the given umask, restoring the old one with the scope. */
const withUmask = (mask: number) =>
  Effect.acquireRelease(
    Effect.sync(() => process.umask(mask)),
    (previous) => Effect.sync(() => process.umask(previous))
  )

describe("file modes", () => {
  it.effect("creates the state directory 0700 and the database (and WAL files) 0600, even under umask 000", () =>
    Effect.gen(function* () {
      const stateDir = join(yield* freshStateDir, "nested")
      yield* withUmask(0o000)
      const repo = yield* openRepo(stateDir)
      yield* repo.insert(newSandbox(1))
      const db = databaseIn(stateDir)
      assert.deepStrictEqual(
        [modeOf(stateDir), modeOf(db), modeOf(`${db}-wal`), modeOf(`${db}-shm`)],
        [0o700, 0o600, 0o600, 0o600]
      )
      const raw = yield* rawDatabase(db, { readonly: true })
      assert.strictEqual(raw.pragma("journal_mode", { simple: true }), "wal")
    })
  )

  it.effect("repairs looser modes on an existing directory, database and side files", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const db = databaseIn(stateDir)
      mkdirSync(stateDir)
      chmodSync(stateDir, 0o755)
      yield* withRepo(stateDir, (repo) => repo.insert(newSandbox(1)))
      for (const [path, mode] of [
        [db, 0o644],
        [`${db}-wal`, 0o666],
        [`${db}-shm`, 0o640]
      ] as const) {
        writeFileSync(path, "", { flag: "a" })
        chmodSync(path, mode)
      }
      chmodSync(stateDir, 0o777)
      const repo = yield* openRepo(stateDir)
      assert.deepStrictEqual(
        [modeOf(stateDir), modeOf(db), modeOf(`${db}-wal`), modeOf(`${db}-shm`)],
        [0o700, 0o600, 0o600, 0o600]
      )
      assert.strictEqual((yield* repo.findAll()).length, 1)
    })
  )
})

describe("modes that cannot be enforced", () => {
  /** Opening fails with InsecurePermissions on `path`, and no database file was created anywhere. */
  const expectInsecure = (stateDir: string, path: string, detail: string) =>
    Effect.gen(function* () {
      const hadDatabase = existsSync(databaseIn(stateDir))
      const error = yield* Effect.flip(openRepo(stateDir))
      assertTag(error, "InsecurePermissions")
      assert.strictEqual(error.path, path)
      assert.include(error.detail, detail)
      assert.strictEqual(existsSync(databaseIn(stateDir)), hadDatabase)
    })

  it.effect.skipIf(!isRoot)("a state directory owned by another user", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      mkdirSync(stateDir, { mode: 0o700 })
      chownSync(stateDir, OTHER_UID, OTHER_UID)
      yield* expectInsecure(stateDir, stateDir, `owned by uid ${OTHER_UID}`)
      assert.strictEqual(modeOf(stateDir), 0o700)
    })
  )

  it.effect.skipIf(!isRoot)("a database file owned by another user", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      mkdirSync(stateDir, { mode: 0o700 })
      writeFileSync(databaseIn(stateDir), "", { mode: 0o644 })
      chownSync(databaseIn(stateDir), OTHER_UID, OTHER_UID)
      yield* expectInsecure(stateDir, databaseIn(stateDir), `owned by uid ${OTHER_UID}`)
      // Not "repaired" either: a file we do not own is left as it was.
      assert.strictEqual(modeOf(databaseIn(stateDir)), 0o644)
    })
  )

  it.effect.skipIf(!existsSync("/proc/self"))("a directory whose mode cannot be changed (chmod fails)", () =>
    // procfs refuses chmod even to root; the directory is ours (this process) and 0555.
    expectInsecure("/proc/self", "/proc/self", "chmod 700 failed (EPERM)")
  )

  it.effect("a state path that is a regular file", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      writeFileSync(stateDir, "not a directory")
      const error = yield* Effect.flip(openRepo(stateDir))
      assertTag(error, "InsecurePermissions")
      assert.strictEqual(error.path, stateDir)
      assert.strictEqual(readFileSync(stateDir, "utf8"), "not a directory")
    })
  )

  it.effect("a database path that is a symlink, whose target is left alone", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const stateDir = join(dir, "state")
      const target = join(dir, "elsewhere.db")
      mkdirSync(stateDir, { mode: 0o700 })
      writeFileSync(target, "", { mode: 0o644 })
      chmodSync(target, 0o644)
      symlinkSync(target, databaseIn(stateDir))
      yield* expectInsecure(stateDir, databaseIn(stateDir), "not a regular file")
      assert.strictEqual(modeOf(target), 0o644)
    })
  )

  it.effect("a database path that is a directory", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      mkdirSync(databaseIn(stateDir), { recursive: true })
      yield* expectInsecure(stateDir, databaseIn(stateDir), "not a regular file")
    })
  )
})

describe("unusable database files are left untouched", () => {
  /** A database written by the repository, with enough rows to span several pages. */
  const populated = (stateDir: string) =>
    withRepo(stateDir, (repo) =>
      Effect.forEach(
        Array.from({ length: 200 }, (_, i) => i + 1),
        (n) =>
          Effect.andThen(
            repo.insert(newSandbox(n)),
            repo.appendLog(newSandbox(n).id, progressEntry(n, "x".repeat(200)))
          ),
        { discard: true }
      )
    )

  const cases: ReadonlyArray<{
    readonly name: string
    readonly prepare: (stateDir: string) => Effect.Effect<void, unknown, never>
    readonly detail: string
  }> = [
    {
      name: "a file that is not a database",
      prepare: (stateDir) =>
        Effect.sync(() => {
          mkdirSync(stateDir, { mode: 0o700 })
          writeFileSync(databaseIn(stateDir), "these are my notes, not a database\n".repeat(200), { mode: 0o600 })
        }),
      detail: "SQLITE_NOTADB"
    },
    {
      name: "a truncated database",
      prepare: (stateDir) =>
        Effect.andThen(
          populated(stateDir),
          Effect.sync(() => {
            const db = databaseIn(stateDir)
            truncateSync(db, Math.floor(statSync(db).size / 2))
          })
        ),
      detail: ""
    },
    {
      name: "a database with a damaged page",
      prepare: (stateDir) =>
        Effect.andThen(
          populated(stateDir),
          Effect.sync(() => {
            const db = databaseIn(stateDir)
            const bytes = readFileSync(db)
            bytes.fill(0xab, 4096, 8192)
            writeFileSync(db, bytes)
          })
        ),
      detail: ""
    },
    {
      name: "another program's SQLite database",
      prepare: (stateDir) =>
        Effect.scoped(
          Effect.gen(function* () {
            mkdirSync(stateDir, { mode: 0o700 })
            const raw = yield* rawDatabase(databaseIn(stateDir))
            raw.exec("CREATE TABLE bookmarks (url TEXT)")
          })
        ),
      detail: "not a prbox database"
    },
    {
      name: "a database from a newer prbox",
      prepare: (stateDir) =>
        Effect.andThen(
          populated(stateDir),
          Effect.scoped(
            Effect.map(rawDatabase(databaseIn(stateDir)), (raw) =>
              raw.prepare("INSERT INTO schema_version (version) VALUES (99)").run()
            )
          )
        ),
      detail: "schema version 99 is newer"
    }
  ]

  it.effect.each(cases)("$name fails with DatabaseUnreadable and keeps every byte", ({ prepare, detail }) =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      yield* prepare(stateDir)
      const db = databaseIn(stateDir)
      const before = readFileSync(db)
      const error = yield* Effect.flip(openRepo(stateDir))
      assertTag(error, "DatabaseUnreadable")
      assert.strictEqual(error.path, db)
      assert.include(error.detail, detail)
      assert.isTrue(readFileSync(db).equals(before), "the database file changed")
    })
  )
})
