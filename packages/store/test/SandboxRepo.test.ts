import { assert, describe, it } from "@effect/vitest"
import {
  type PullRequestInfo,
  PullRequestNumber,
  type Sandbox,
  type SandboxId,
  type SandboxStatus
} from "@prbox/domain"
import { Cause, Effect, Exit, Option, Redacted } from "effect"
import type { SandboxRepoShape, StatusUpdate } from "../src/SandboxRepo.ts"
import {
  assertTag,
  databaseIn,
  freshStateDir,
  newSandbox,
  openRepo,
  progressEntry,
  rawDatabase,
  sandboxId,
  statusEntry
} from "./support.ts"

const freshRepo = Effect.flatMap(freshStateDir, (stateDir) => openRepo(stateDir))

/** Any repository write, for tables of calls whose results differ. */
type AnyWrite = Effect.Effect<unknown, Effect.Error<ReturnType<SandboxRepoShape["updateStatusAndLog"]>>>

/** Walks a new row through the given statuses. */
const driveTo = (repo: SandboxRepoShape, n: number, path: ReadonlyArray<SandboxStatus>) =>
  Effect.gen(function* () {
    const row = yield* repo.insert(newSandbox(n))
    for (const to of path) yield* repo.updateStatus(row.id, { to })
    return row.id
  })

const plain = (row: Sandbox) => ({
  ...row,
  accessPassword: row.accessPassword === null ? null : Redacted.value(row.accessPassword)
})

describe("insert and find", () => {
  it.effect("insert returns the stored row and findById reads it back", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const inserted = yield* repo.insert(
        newSandbox(1, { title: "Fix the widget", sourceBranch: "fix", workspacePath: "/ws/1", detail: "queued" })
      )
      const expected: ReturnType<typeof plain> = {
        id: sandboxId(1),
        provider: "github",
        host: "github.com",
        account: "4242",
        repository: "acme/widgets",
        pullRequest: PullRequestNumber.make(1),
        title: "Fix the widget",
        sourceBranch: "fix",
        sourceCommit: null,
        accessPassword: "password-1",
        workspacePath: "/ws/1",
        containerId: null,
        hostPort: null,
        status: "creating",
        detail: "queued",
        error: null,
        setupError: null,
        environment: null,
        environmentPlan: null,
        createdAt: 1001,
        lastActivityAt: 1001,
        stoppedAt: null,
        legacyRetiredAt: null,
        destroyFenced: false,
        author: null,
        pullRequestState: null,
        baseRef: null,
        closedSeenAt: null,
        engine: null,
        remoteUrl: null
      }
      assert.deepStrictEqual(plain(inserted), expected)
      const found = yield* repo.findById(sandboxId(1))
      assert.isTrue(Option.isSome(found))
      if (Option.isSome(found)) assert.deepStrictEqual(plain(found.value), expected)
      assert.isTrue(Option.isNone(yield* repo.findById(sandboxId(2))))
    })
  )

  it.effect("a second live row for the same key fails with the existing id and writes nothing", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      yield* repo.insert(newSandbox(1))
      const error = yield* Effect.flip(repo.insert(newSandbox(2, { pullRequest: PullRequestNumber.make(1) })))
      assertTag(error, "LiveSandboxExists")
      assert.strictEqual(error.existingId, sandboxId(1))
      assert.strictEqual(error.operation, "insert")
      assert.deepStrictEqual(
        (yield* repo.findAll()).map((row) => row.id),
        [sandboxId(1)]
      )
    })
  )

  it.effect.each([
    { differs: "host", overrides: { host: "gitlab.example.com" } },
    { differs: "account", overrides: { account: "profile-a" } },
    { differs: "repository", overrides: { repository: "acme/other" } },
    { differs: "provider", overrides: { provider: "gitlab" as const } }
  ])("a live row of the same PR with a different $differs is allowed", ({ overrides }) =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      yield* repo.insert(newSandbox(1))
      yield* repo.insert(newSandbox(2, { pullRequest: PullRequestNumber.make(1), ...overrides }))
      assert.strictEqual((yield* repo.findActive()).length, 2)
    })
  )

  it.effect.each([
    { end: "stopped", path: ["stopping", "stopped"] as const },
    { end: "error", path: ["error"] as const }
  ])("a new row may replace one that ended $end", ({ path }) =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      yield* driveTo(repo, 1, path)
      const replacement = yield* repo.insert(newSandbox(2, { pullRequest: PullRequestNumber.make(1) }))
      assert.strictEqual(replacement.status, "creating")
      assert.deepStrictEqual(
        (yield* repo.findActive()).map((row) => row.id),
        [sandboxId(2)]
      )
    })
  )

  it.effect("a duplicate id is a StoreError", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      yield* repo.insert(newSandbox(1))
      const error = yield* Effect.flip(repo.insert(newSandbox(1, { repository: "acme/other" })))
      assertTag(error, "StoreError")
      assert.strictEqual(error.operation, "insert")
      assert.include(error.detail, "SQLITE_CONSTRAINT_PRIMARYKEY")
    })
  )

  it.effect("an input that would not decode is refused before it is written", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const error = yield* Effect.flip(repo.insert(newSandbox(1, { createdAt: -5 })))
      assertTag(error, "RowDecodeError")
      assert.strictEqual(error.rowId, sandboxId(1))
      assert.include(error.detail, "createdAt")
      assert.deepStrictEqual(yield* repo.findAll(), [])
    })
  )
})

describe("queries", () => {
  it.effect("findByPr returns every row of the PR, across hosts, accounts and legacy rows, newest first", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir)
      const pr = PullRequestNumber.make(7)
      yield* repo.insert(newSandbox(1, { pullRequest: pr, createdAt: 10 }))
      yield* repo.insert(newSandbox(2, { pullRequest: pr, account: "profile", createdAt: 30 }))
      yield* repo.insert(newSandbox(3, { pullRequest: pr, host: "ghe.example.com", createdAt: 20 }))
      yield* repo.insert(newSandbox(4, { pullRequest: PullRequestNumber.make(8), createdAt: 40 }))
      yield* repo.insert(newSandbox(5, { pullRequest: pr, repository: "acme/other", createdAt: 50 }))
      const raw = yield* rawDatabase(databaseIn(stateDir))
      raw
        .prepare(
          `INSERT INTO sandboxes (id, provider, host, account, repository, pull_request, access_password,
             status, created_at, last_activity_at)
           VALUES ('legacy000001', 'github', NULL, '', 'acme/widgets', 7, NULL, 'running', 25, 25)`
        )
        .run()
      const rows = yield* repo.findByPr({ provider: "github", repository: "acme/widgets", pullRequest: pr })
      assert.deepStrictEqual(
        rows.map((row) => row.id),
        [sandboxId(2), "legacy000001", sandboxId(3), sandboxId(1)]
      )
      const legacy = rows[1]
      assert.strictEqual(legacy?.host, null)
      assert.strictEqual(legacy?.accessPassword, null)
    })
  )

  it.effect("findActive skips terminal rows; findAll returns everything newest first (ties: latest insert first)", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      yield* driveTo(repo, 1, [])
      yield* driveTo(repo, 2, ["cloning", "starting", "running"])
      yield* driveTo(repo, 3, ["stopping", "stopped"])
      yield* driveTo(repo, 4, ["error"])
      yield* driveTo(repo, 5, ["stopping"])
      yield* repo.insert(newSandbox(6, { createdAt: 1005 }))
      assert.deepStrictEqual(
        (yield* repo.findActive()).map((row) => [row.id, row.status]),
        [
          [sandboxId(6), "creating"],
          [sandboxId(5), "stopping"],
          [sandboxId(2), "running"],
          [sandboxId(1), "creating"]
        ]
      )
      assert.deepStrictEqual(
        (yield* repo.findAll()).map((row) => row.id),
        [6, 5, 4, 3, 2, 1].map(sandboxId)
      )
    })
  )
})

describe("updateStatus", () => {
  it.effect("writes the given fields, keeps absent ones and clears nulls", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, ["cloning"])
      const starting = yield* repo.updateStatus(id, {
        to: "starting",
        expectedFrom: ["cloning"],
        containerId: "c-1",
        hostPort: 8443,
        workspacePath: "/ws/1",
        sourceBranch: "feature",
        sourceCommit: "abc123",
        detail: "starting container",
        error: "transient"
      })
      assert.deepStrictEqual(
        [starting.status, starting.containerId, starting.hostPort, starting.workspacePath, starting.error],
        ["starting", "c-1", 8443, "/ws/1", "transient"]
      )
      const running = yield* repo.updateStatus(id, { to: "running", error: null, setupError: "setup [1/1] failed" })
      assert.deepStrictEqual(
        [running.status, running.containerId, running.hostPort, running.sourceCommit, running.detail, running.error],
        ["running", "c-1", 8443, "abc123", "starting container", null]
      )
      assert.strictEqual(running.setupError, "setup [1/1] failed")
      const stopped = yield* repo.updateStatus(id, {
        to: "stopped",
        stoppedAt: 5000,
        legacyRetiredAt: 4999,
        destroyFenced: true,
        hostPort: null
      })
      assert.deepStrictEqual(
        [stopped.status, stopped.stoppedAt, stopped.legacyRetiredAt, stopped.destroyFenced, stopped.hostPort],
        ["stopped", 5000, 4999, true, null]
      )
      // A status write without it keeps the setup failure; only an explicit null clears it.
      assert.strictEqual(stopped.setupError, "setup [1/1] failed")
      const cleared = yield* repo.updateStatus(id, { to: "stopped", setupError: null })
      assert.isNull(cleared.setupError)
      const found = yield* repo.findById(id)
      assert.deepStrictEqual(Option.map(found, plain), Option.some(plain(cleared)))
    })
  )

  it.effect("keeps the environment and its plan as written (JSON), until a write replaces them", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, ["cloning"])
      const environment = {
        kind: "devcontainer" as const,
        path: ".devcontainer/devcontainer.json",
        image: "prbox-build/org-repo:abc",
        imageDigest: "sha256:1234"
      }
      const environmentPlan = {
        image: "prbox-build/org-repo:abc",
        containerEnv: { A: "1" },
        remoteEnv: { PATH_EXTRA: "/x" },
        remoteUser: "node",
        workspaceFolder: "/workspaces/repo",
        forwardPorts: [3000, "db:5432"],
        portsAttributes: { "3000": { label: "web" } },
        cpus: 2,
        memoryMb: null,
        extensions: ["dbaeumer.vscode-eslint"],
        steps: [
          { hook: "postCreateCommand" as const, command: { _tag: "Shell" as const, command: "npm ci" }, origin: "x" },
          {
            hook: "postStartCommand" as const,
            command: {
              _tag: "Parallel" as const,
              entries: [{ name: "a", command: { _tag: "Exec" as const, argv: ["echo", "a"] } }]
            },
            origin: "x"
          }
        ]
      }
      const starting = yield* repo.updateStatus(id, { to: "starting", environment, environmentPlan })
      assert.deepStrictEqual([starting.environment, starting.environmentPlan], [environment, environmentPlan])
      const running = yield* repo.updateStatus(id, { to: "running" })
      assert.deepStrictEqual(running.environment, environment)
      const found = yield* repo.findById(id)
      assert.deepStrictEqual(Option.getOrThrow(found).environmentPlan, environmentPlan)
    })
  )

  it.effect("keeps what was left out and the container options; a row written without them still reads", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 2, ["cloning"])
      const environment = {
        kind: "devcontainer" as const,
        path: ".devcontainer/devcontainer.json",
        image: "img:1",
        imageDigest: null,
        ignored: [{ property: "privileged", detail: "widens the container" }]
      }
      const environmentPlan = {
        image: "img:1",
        containerEnv: {},
        remoteEnv: {},
        remoteUser: null,
        workspaceFolder: "/workspaces/repo",
        forwardPorts: [],
        portsAttributes: {},
        cpus: null,
        memoryMb: null,
        extensions: [],
        steps: [],
        container: {
          hostname: "review",
          extraHosts: ["api.local:10.0.0.1"],
          securityOpt: ["no-new-privileges"],
          shmSizeMb: 64,
          volumes: [{ source: "cache", target: "/cache", readOnly: false }]
        }
      }
      const starting = yield* repo.updateStatus(id, { to: "starting", environment, environmentPlan })
      assert.deepStrictEqual([starting.environment, starting.environmentPlan], [environment, environmentPlan])
      // Rows from before these fields (the test above writes one) decode without them.
      const { ignored: _ignored, ...older } = environment
      const rewritten = yield* repo.updateStatus(id, { to: "running", environment: older })
      assert.deepStrictEqual(rewritten.environment, older)
    })
  )

  const refusals: ReadonlyArray<{
    readonly name: string
    readonly path: ReadonlyArray<SandboxStatus>
    readonly update: StatusUpdate
    readonly from: SandboxStatus
  }> = [
    { name: "a move the status machine forbids", path: [], update: { to: "running" }, from: "creating" },
    { name: "leaving stopped for cloning", path: ["stopping", "stopped"], update: { to: "cloning" }, from: "stopped" },
    {
      name: "a current status outside expectedFrom",
      path: ["cloning", "starting", "running"],
      update: { to: "stopping", expectedFrom: ["starting"] },
      from: "running"
    }
  ]
  it.effect.each(refusals)("refuses $name with InvalidTransition and changes nothing", ({ path, update, from }) =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, path)
      const before = yield* repo.findById(id)
      const error = yield* Effect.flip(repo.updateStatus(id, { ...update, containerId: "c-9" }))
      assertTag(error, "InvalidTransition")
      assert.deepStrictEqual([error.id, error.from, error.to], [id, from, update.to])
      assert.deepStrictEqual(Option.map(yield* repo.findById(id), plain), Option.map(before, plain))
    })
  )

  it.effect("an unknown id is SandboxNotFound", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const error = yield* Effect.flip(repo.updateStatus(sandboxId(9), { to: "stopping" }))
      assertTag(error, "SandboxNotFound")
      assert.strictEqual(error.id, sandboxId(9))
    })
  )

  it.effect("restarting a stopped row while another live row holds the key is LiveSandboxExists", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const old = yield* driveTo(repo, 1, ["stopping", "stopped"])
      yield* repo.insert(newSandbox(2, { pullRequest: PullRequestNumber.make(1) }))
      const error = yield* Effect.flip(repo.updateStatus(old, { to: "starting" }))
      assertTag(error, "LiveSandboxExists")
      assert.strictEqual(error.existingId, sandboxId(2))
      const row = yield* repo.findById(old)
      assert.strictEqual(Option.getOrUndefined(row)?.status, "stopped")
    })
  )

  it.effect("a value the row schema rejects is RowDecodeError and nothing is written", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, ["cloning"])
      const error = yield* Effect.flip(repo.updateStatus(id, { to: "starting", hostPort: 70_000 }))
      assertTag(error, "RowDecodeError")
      assert.include(error.detail, "hostPort")
      const row = Option.getOrUndefined(yield* repo.findById(id))
      assert.deepStrictEqual([row?.status, row?.hostPort], ["cloning", null])
    })
  )
})

const prInfo = (state: PullRequestInfo["state"]): PullRequestInfo => ({
  title: "Fix the widget",
  author: "octocat",
  state,
  sourceBranch: "fix",
  sourceCloneUrl: null,
  baseRef: "main",
  headSha: "a".repeat(40)
})

describe("recordPullRequest", () => {
  it.effect(
    "stores what the service said; closedSeenAt is the first sighting of merged/closed, cleared when reopened",
    () =>
      Effect.gen(function* () {
        const repo = yield* freshRepo
        const id = yield* driveTo(repo, 1, ["cloning", "starting", "running"])
        const opened = yield* repo.recordPullRequest(id, prInfo("open"), 5_000)
        assert.deepStrictEqual(
          [opened.title, opened.author, opened.pullRequestState, opened.baseRef, opened.closedSeenAt, opened.status],
          ["Fix the widget", "octocat", "open", "main", null, "running"]
        )
        yield* repo.recordPullRequest(id, { ...prInfo("merged"), title: "Fix the widget (v2)" }, 6_000)
        yield* repo.recordPullRequest(id, prInfo("merged"), 7_000)
        const merged = Option.getOrThrow(yield* repo.findById(id))
        assert.deepStrictEqual([merged.pullRequestState, merged.closedSeenAt], ["merged", 6_000])
        const closed = yield* repo.recordPullRequest(id, prInfo("closed"), 8_000)
        assert.deepStrictEqual([closed.pullRequestState, closed.closedSeenAt], ["closed", 6_000])
        const reopened = yield* repo.recordPullRequest(id, prInfo("open"), 9_000)
        assert.deepStrictEqual([reopened.pullRequestState, reopened.closedSeenAt], ["open", null])
        // Other rows are untouched.
        const other = yield* repo.insert(newSandbox(2))
        assert.deepStrictEqual([other.title, other.pullRequestState], [null, null])
      })
  )
})

describe("fence, detail, touch", () => {
  it.effect("setFence changes only the fence, also on a stopped row", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, ["stopping", "stopped"])
      const fenced = yield* repo.setFence(id, true)
      assert.deepStrictEqual([fenced.status, fenced.destroyFenced], ["stopped", true])
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.destroyFenced, true)
      assert.strictEqual((yield* repo.setFence(id, false)).destroyFenced, false)
    })
  )

  it.effect("updateDetail sets and clears the progress line", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, [])
      yield* repo.updateDetail(id, "cloning 40%")
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.detail, "cloning 40%")
      yield* repo.updateDetail(id, null)
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.detail, null)
    })
  )

  it.effect("touch only moves lastActivityAt forward", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, [])
      yield* repo.touch(id, 9_000)
      yield* repo.touch(id, 2_000)
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.lastActivityAt, 9_000)
      yield* repo.touch(id, 9_500)
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.lastActivityAt, 9_500)
    })
  )

  it.effect.each([
    { operation: "setFence", call: (repo: SandboxRepoShape) => repo.setFence(sandboxId(9), true) },
    { operation: "updateDetail", call: (repo: SandboxRepoShape) => repo.updateDetail(sandboxId(9), "x") },
    {
      operation: "updateDetailAndLog",
      call: (repo: SandboxRepoShape) => repo.updateDetailAndLog(sandboxId(9), progressEntry(1, "x"))
    },
    {
      operation: "updateStatusAndLog",
      call: (repo: SandboxRepoShape): AnyWrite => repo.updateStatusAndLog(sandboxId(9), { to: "stopping" }, 1)
    },
    { operation: "touch", call: (repo: SandboxRepoShape) => repo.touch(sandboxId(9), 1) },
    {
      operation: "recordPullRequest",
      call: (repo: SandboxRepoShape) => repo.recordPullRequest(sandboxId(9), prInfo("open"), 1)
    },
    { operation: "appendLog", call: (repo: SandboxRepoShape) => repo.appendLog(sandboxId(9), progressEntry(1, "x")) },
    { operation: "readLog", call: (repo: SandboxRepoShape) => repo.readLog(sandboxId(9), { limit: 10 }) },
    { operation: "delete", call: (repo: SandboxRepoShape) => repo.delete(sandboxId(9)) }
  ])("$operation of an unknown id is SandboxNotFound", ({ call }) =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      yield* repo.insert(newSandbox(1))
      const error = yield* Effect.flip(call(repo))
      assertTag(error, "SandboxNotFound")
      assert.strictEqual(error.id, sandboxId(9))
    })
  )
})

describe("log", () => {
  it.effect("appendLog numbers lines; readLog pages them in order, per sandbox", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const a = yield* driveTo(repo, 1, [])
      const b = yield* driveTo(repo, 2, [])
      const seqs: Array<number> = []
      for (let i = 0; i < 5; i++) {
        seqs.push((yield* repo.appendLog(a, progressEntry(100 + i, `a${i}`))).seq)
        yield* repo.appendLog(b, progressEntry(200 + i, `b${i}`))
      }
      assert.deepStrictEqual(seqs, [1, 3, 5, 7, 9])
      const first = yield* repo.readLog(a, { limit: 2 })
      assert.deepStrictEqual(first, [
        { _tag: "Progress", seq: 1, sandboxId: a, at: 100, status: "creating", line: "a0" },
        { _tag: "Progress", seq: 3, sandboxId: a, at: 101, status: "creating", line: "a1" }
      ])
      const rest = yield* repo.readLog(a, { afterSeq: 3, limit: 10 })
      assert.deepStrictEqual(
        rest.map((entry) => entry.seq),
        [5, 7, 9]
      )
      assert.deepStrictEqual(yield* repo.readLog(a, { afterSeq: 9, limit: 10 }), [])
    })
  )

  it.effect("each entry keeps its kind: a status change with its error, a progress line with its status", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, [])
      const written = [
        yield* repo.appendLog(id, statusEntry(10, "cloning")),
        yield* repo.appendLog(id, progressEntry(11, "status: running", "cloning")),
        yield* repo.appendLog(id, statusEntry(12, "error", "clone failed"))
      ]
      assert.deepStrictEqual(written, [
        { _tag: "StatusChanged", seq: 1, sandboxId: id, at: 10, status: "cloning", error: null },
        // A progress line is never read as a status change, whatever its text.
        { _tag: "Progress", seq: 2, sandboxId: id, at: 11, status: "cloning", line: "status: running" },
        { _tag: "StatusChanged", seq: 3, sandboxId: id, at: 12, status: "error", error: "clone failed" }
      ])
      assert.deepStrictEqual(yield* repo.readLog(id, { limit: 10 }), written)
    })
  )

  it.effect.each([0, -1, 1.5])("readLog with limit %s is a defect, not an unbounded read", (limit) =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, [])
      const exit = yield* Effect.exit(repo.readLog(id, { limit }))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
    })
  )
})

describe("a row write with its journal entry", () => {
  /** What a failed write must have left as it was: the row and the whole log. */
  const snapshot = (repo: SandboxRepoShape, id: SandboxId) =>
    Effect.all({
      row: Effect.map(repo.findById(id), (row) => Option.map(row, plain)),
      log: repo.readLog(id, { limit: 100 })
    })

  /** Makes every log insert fail, through a second connection, the way a full disk would fail it. */
  const failLogInserts = (stateDir: string) =>
    Effect.acquireRelease(
      Effect.map(rawDatabase(databaseIn(stateDir)), (raw) => {
        raw.exec(
          "CREATE TRIGGER fail_log_insert BEFORE INSERT ON sandbox_log BEGIN SELECT RAISE(ABORT, 'injected'); END"
        )
        return raw
      }),
      (raw) => Effect.sync(() => raw.exec("DROP TRIGGER fail_log_insert"))
    )

  it.effect("updateDetailAndLog appends the line and makes it the row's detail", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, [])
      yield* repo.appendLog(id, progressEntry(10, "before"))
      const entry = yield* repo.updateDetailAndLog(id, progressEntry(11, "cloning 40%", "cloning"))
      assert.deepStrictEqual(entry, {
        _tag: "Progress",
        seq: 2,
        sandboxId: id,
        at: 11,
        status: "cloning",
        line: "cloning 40%"
      })
      assert.deepStrictEqual((yield* repo.readLog(id, { afterSeq: 1, limit: 10 })).at(0), entry)
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.detail, "cloning 40%")
    })
  )

  it.effect("updateStatusAndLog logs a status change or a given error, not a write of fields only", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, ["cloning"])
      const logged = (update: StatusUpdate, at: number) =>
        Effect.map(repo.updateStatusAndLog(id, update, at), ({ row, logged }) => {
          assert.strictEqual(row.status, update.to)
          return Option.getOrNull(logged)
        })
      const written = [
        yield* logged({ to: "starting" }, 20),
        // The container id and port recorded while starting: not a status change.
        yield* logged({ to: "starting", containerId: "c-1", hostPort: 8080 }, 21),
        // A given error is logged even on the same status, with the row's error after the write.
        yield* logged({ to: "starting", error: "health check failed" }, 22),
        yield* logged({ to: "error" }, 23)
      ]
      assert.deepStrictEqual(written, [
        { _tag: "StatusChanged", seq: 1, sandboxId: id, at: 20, status: "starting", error: null },
        null,
        { _tag: "StatusChanged", seq: 2, sandboxId: id, at: 22, status: "starting", error: "health check failed" },
        { _tag: "StatusChanged", seq: 3, sandboxId: id, at: 23, status: "error", error: "health check failed" }
      ])
      assert.deepStrictEqual(
        yield* repo.readLog(id, { limit: 10 }),
        written.filter((entry) => entry !== null)
      )
      const row = Option.getOrThrow(yield* repo.findById(id))
      assert.deepStrictEqual([row.status, row.containerId, row.hostPort], ["error", "c-1", 8080])
    })
  )

  it.effect("a refused status write logs nothing", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      const id = yield* driveTo(repo, 1, [])
      const before = yield* snapshot(repo, id)
      const error = yield* Effect.flip(repo.updateStatusAndLog(id, { to: "running", error: "x" }, 5))
      assertTag(error, "InvalidTransition")
      assert.deepStrictEqual(yield* snapshot(repo, id), before)
    })
  )

  it.effect.each([
    {
      write: "updateDetailAndLog",
      call: (repo: SandboxRepoShape, id: SandboxId): AnyWrite =>
        repo.updateDetailAndLog(id, progressEntry(30, "lost", "cloning"))
    },
    {
      write: "updateStatusAndLog",
      call: (repo: SandboxRepoShape, id: SandboxId): AnyWrite =>
        repo.updateStatusAndLog(id, { to: "starting", detail: "lost", containerId: "c-lost" }, 30)
    }
  ])("$write: a failed log insert rolls the row back too, and numbering goes on without a gap", ({ call }) =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir)
      const id = yield* driveTo(repo, 1, ["cloning"])
      yield* repo.updateDetailAndLog(id, progressEntry(10, "kept", "cloning"))
      const before = yield* snapshot(repo, id)
      const error = yield* Effect.scoped(Effect.andThen(failLogInserts(stateDir), Effect.flip(call(repo, id))))
      assertTag(error, "StoreError")
      assert.include(error.detail, "injected")
      assert.deepStrictEqual(yield* snapshot(repo, id), before)
      // The rolled-back entry took no number: the next one follows the last kept one.
      yield* call(repo, id)
      const log = yield* repo.readLog(id, { limit: 10 })
      assert.deepStrictEqual(
        log.map((entry) => entry.seq),
        [1, 2]
      )
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(id))?.detail, "lost")
    })
  )
})

describe("delete", () => {
  it.effect("removes the row and its log, leaves others, and never reuses a sequence number", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir)
      const a = yield* driveTo(repo, 1, [])
      const b = yield* driveTo(repo, 2, [])
      yield* repo.appendLog(b, progressEntry(1, "b"))
      yield* repo.appendLog(a, progressEntry(2, "a"))
      const last = (yield* repo.appendLog(a, progressEntry(3, "a"))).seq
      yield* repo.delete(a)
      assert.isTrue(Option.isNone(yield* repo.findById(a)))
      assert.deepStrictEqual(
        (yield* repo.findAll()).map((row) => row.id),
        [b]
      )
      const raw = yield* rawDatabase(databaseIn(stateDir), { readonly: true })
      const orphans = raw.prepare("SELECT count(*) FROM sandbox_log WHERE sandbox_id = ?").pluck().get(a)
      assert.strictEqual(orphans, 0)
      assert.strictEqual((yield* repo.readLog(b, { limit: 10 })).length, 1)
      // The deleted sandbox held the highest numbers; they are not handed out again.
      assert.strictEqual((yield* repo.appendLog(b, progressEntry(4, "b"))).seq, last + 1)
    })
  )
})

describe("bad data", () => {
  it.effect.each([
    { column: "status", value: "'paused'", field: "status" },
    { column: "destroy_fenced", value: "2", field: "destroyFenced" },
    { column: "host_port", value: "0", field: "hostPort" },
    { column: "access_password", value: "X'2a'", field: "accessPassword" }
  ])("a stored $column that fails to decode is a RowDecodeError naming the row", ({ column, value, field }) =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir)
      const bad = yield* driveTo(repo, 1, [])
      const good = yield* driveTo(repo, 2, [])
      const raw = yield* rawDatabase(databaseIn(stateDir))
      // The CHECK on destroy_fenced is bypassed the way a damaged file would bypass it.
      raw.pragma("ignore_check_constraints = ON")
      raw.prepare(`UPDATE sandboxes SET ${column} = ${value} WHERE id = ?`).run(bad)
      const failures = [
        yield* Effect.flip(repo.findById(bad)),
        yield* Effect.flip(repo.findAll()),
        yield* Effect.flip(repo.findActive()),
        yield* Effect.flip(repo.updateStatus(bad, { to: "cloning" }))
      ]
      for (const error of failures) {
        assertTag(error, "RowDecodeError")
        assert.strictEqual(error.rowId, bad)
        assert.include(error.detail, field)
      }
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(good))?.status, "creating")
    })
  )

  it.effect.each([
    { set: "at = 'yesterday'", field: "at" },
    { set: "status = 'paused'", field: "status" },
    { set: "kind = 'note'", field: "kind" }
  ])("a log entry whose $field fails to decode is a RowDecodeError naming the sandbox", ({ set, field }) =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir)
      const id = yield* driveTo(repo, 1, [])
      yield* repo.appendLog(id, progressEntry(1, "fine"))
      const raw = yield* rawDatabase(databaseIn(stateDir))
      // The CHECK on kind is bypassed the way a damaged file would bypass it.
      raw.pragma("ignore_check_constraints = ON")
      raw.prepare(`UPDATE sandbox_log SET ${set} WHERE sandbox_id = ?`).run(id)
      const error = yield* Effect.flip(repo.readLog(id, { limit: 5 }))
      assertTag(error, "RowDecodeError")
      assert.strictEqual(error.rowId, id)
      assert.include(error.detail, "log entry 1")
      assert.include(error.detail, field)
    })
  )
})

describe("locking", () => {
  it.effect("a write waits busy_timeout for another connection's lock, then fails with StoreError", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir, { busyTimeoutMillis: 300 })
      const raw = yield* rawDatabase(databaseIn(stateDir), { timeout: 0 })
      raw.exec("BEGIN IMMEDIATE")
      const started = performance.now()
      const error = yield* Effect.flip(repo.insert(newSandbox(1)))
      const waited = performance.now() - started
      raw.exec("ROLLBACK")
      assertTag(error, "StoreError")
      assert.include(error.detail, "SQLITE_BUSY")
      assert.isAtLeast(waited, 250)
      // A read-only transaction does not block it: the write lock was the point.
      raw.exec("BEGIN")
      raw.prepare("SELECT count(*) FROM sandboxes").get()
      yield* repo.insert(newSandbox(1))
      raw.exec("COMMIT")
      assert.strictEqual((yield* repo.findAll()).length, 1)
    })
  )
})

describe("write generation", () => {
  it.effect("moves after every kind of write and stays put across reads", () =>
    Effect.gen(function* () {
      const repo = yield* freshRepo
      let last = yield* repo.generation
      const moved = function* (what: string) {
        const now = yield* repo.generation
        assert.isAbove(now, last, `${what} did not move the generation`)
        last = now
      }
      const id = sandboxId(1)
      yield* repo.insert(newSandbox(1))
      yield* moved("insert")
      yield* repo.updateStatus(id, { to: "cloning" })
      yield* moved("updateStatus")
      yield* repo.setFence(id, true)
      yield* moved("setFence")
      yield* repo.updateDetail(id, "cloning the mirror")
      yield* moved("updateDetail")
      yield* repo.touch(id, 5_000)
      yield* moved("touch")
      yield* repo.appendLog(id, progressEntry(5_001, "a line"))
      yield* moved("appendLog")
      yield* repo.updateDetailAndLog(id, progressEntry(5_002, "another line"))
      yield* moved("updateDetailAndLog")
      yield* repo.updateStatusAndLog(id, { to: "starting" }, 5_003)
      yield* moved("updateStatusAndLog")

      yield* repo.findAll()
      yield* repo.findActive()
      yield* repo.findById(id)
      yield* repo.findByPr({ provider: "github", repository: "acme/widgets", pullRequest: PullRequestNumber.make(1) })
      yield* repo.readLog(id, { limit: 10 })
      assert.strictEqual(yield* repo.generation, last, "a read moved the generation")
      assert.strictEqual(yield* repo.generation, last)

      yield* repo.delete(id)
      yield* moved("delete")
    })
  )

  it.effect("moves when another connection commits a write, not when it only reads", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const repo = yield* openRepo(stateDir)
      yield* repo.insert(newSandbox(1))
      const before = yield* repo.generation
      const raw = yield* rawDatabase(databaseIn(stateDir))
      raw.prepare("SELECT count(*) FROM sandboxes").get()
      assert.strictEqual(yield* repo.generation, before)
      raw.prepare("UPDATE sandboxes SET detail = 'from elsewhere' WHERE id = ?").run(sandboxId(1))
      const after = yield* repo.generation
      assert.isAbove(after, before)
      assert.strictEqual(Option.getOrUndefined(yield* repo.findById(sandboxId(1)))?.detail, "from elsewhere")
      assert.strictEqual(yield* repo.generation, after)
      // Another repository on the same file is such a connection too.
      const other = yield* openRepo(stateDir)
      yield* other.touch(sandboxId(1), 9_000)
      assert.isAbove(yield* repo.generation, after)
    })
  )
})
