import { execFileSync } from "node:child_process"
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { SandboxId } from "@prbox/domain"
import { Migrations, SandboxRepo } from "@prbox/store"
import { Effect, Option } from "effect"
import { afterAll, inject } from "vitest"
import { makeRemote, type TestRemote } from "../../git/test/helpers.ts"
import { Reconciler, SandboxService } from "../src/index.ts"
import {
  assertRowsAndContainersAgree,
  containersOfHome,
  describeContainers,
  describeRow,
  killChildAt,
  recordViolation
} from "./crash/agree.ts"
import { addLegacyFiller, readDatabase } from "./crash/legacy.ts"
import { childEnv, PHASES, type Phase, PULL_REQUEST, phaseLine } from "./crash/phases.ts"
import { engineLayer } from "./engine-layer.ts"
import { healthzGitImage } from "./git-image.ts"
import { bounded, containersOf, rowOf } from "./harness.ts"
import { runLabelled, writeV1Database } from "./legacy-fixtures.ts"

/**
 * Guarantee 5 (and 4's fence): the engine runs in a child process, is driven
 * to a phase, announces it and blocks; the test kills it with SIGKILL there.
 * A fresh engine on the same home then reconciles, and the invariants must
 * hold: no running container without a row claiming it, no row in a
 * pre-container state, no row pointing at a missing container, every fence
 * intact, an intact database, and a new open of the PR reaching `running`.
 */

const CHILD = fileURLToPath(new URL("./crash/child.ts", import.meta.url))
const LEGACY_ID = SandboxId.make("legacy000001")
const MIGRATION_ROWS = 20_000

/**
 * The PR's row(s) and the home's container states as the kill left them:
 * proof that the kill landed where the phase says.
 */
const AT_KILL: Record<Phase, { readonly rows: ReadonlyArray<string>; readonly containers: ReadonlyArray<string> }> = {
  "after-row-insert": { rows: ["creating"], containers: [] },
  "mid-clone": { rows: ["cloning"], containers: [] },
  "after-create-before-start": { rows: ["starting"], containers: ["created"] },
  "after-start-before-running": { rows: ["starting/container"], containers: ["running"] },
  "mid-stop": { rows: ["stopping/container"], containers: ["running"] },
  "mid-retirement": { rows: ["stopping/container"], containers: ["running"] },
  "mid-destroy": { rows: ["stopped/container"], containers: ["exited"] },
  "mid-gc-cleanup": { rows: ["stopped/container"], containers: [] },
  "mid-migration": { rows: ["stopped"], containers: [] },
  fenced: { rows: ["stopped/container"], containers: ["exited"] }
}

/** Phases killed after a removal was attempted: the fence was written before it. */
const FENCED_AT_KILL: ReadonlySet<Phase> = new Set(["mid-destroy", "mid-gc-cleanup", "fenced"])

interface Home {
  readonly home: string
  readonly remote: TestRemote
}

/** A private home with a local bare remote; every container of the home is removed with it. */
const crashHome = Effect.acquireRelease(
  Effect.sync((): Home => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), "prbox-crash-")))
    return { home, remote: makeRemote(home) }
  }),
  ({ home }) =>
    Effect.sync(() => {
      const left = containersOfHome(home).map((c) => c.id)
      if (left.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...left], { stdio: "ignore" })
      rmSync(home, { recursive: true, force: true })
    })
)

/** What each phase needs in the home before the child's store opens it. */
const seed = (phase: Phase, { home, remote }: Home): void => {
  if (phase === "mid-retirement") {
    // An authenticated hostless v1 row whose container runs: reconcile retires it.
    writeV1Database(home, [
      {
        id: LEGACY_ID,
        repository: remote.path,
        pullRequest: PULL_REQUEST,
        password: "pw",
        status: "running",
        containerId: runLabelled(home, LEGACY_ID)
      }
    ])
  } else if (phase === "mid-migration") {
    writeV1Database(home, [
      {
        id: LEGACY_ID,
        repository: remote.path,
        pullRequest: PULL_REQUEST,
        password: "pw",
        status: "stopped",
        containerId: null
      }
    ])
    addLegacyFiller(home, remote.path, MIGRATION_ROWS)
  }
}

/** Runs the child until it prints the phase's line, kills it with SIGKILL then, and resolves once it is dead. */
const killAtPhase = (phase: Phase, { home, remote }: Home) =>
  killChildAt({
    script: CHILD,
    phase,
    expected: phaseLine(phase),
    // An image with git: the open's checkout runs in the container, as on most images.
    env: childEnv(home, remote.path, inject("testRunId"), healthzGitImage()),
    seconds: 60
  })

interface TableRow {
  phase: string
  row: string
  containers: string
  outcome: string
}

const table: Array<TableRow> = []

afterAll(() => {
  const header: TableRow = {
    phase: "phase",
    row: "row after reconcile",
    containers: "containers",
    outcome: "outcome"
  }
  const lines = [header, ...table]
  const width = (key: keyof TableRow) => Math.max(...lines.map((line) => line[key].length))
  const keys = ["phase", "row", "containers", "outcome"] as const
  const format = (line: TableRow) => keys.map((key) => line[key].padEnd(width(key))).join(" | ")
  console.log(
    [
      "crash safety: phase → outcome",
      format(header),
      keys.map((key) => "-".repeat(width(key))).join("-|-"),
      ...table.map(format)
    ].join("\n")
  )
})

const crashAt = (phase: Phase) =>
  Effect.gen(function* () {
    const entry: TableRow = { phase, row: "-", containers: "-", outcome: "-" }
    table.push(entry)
    const env = yield* crashHome
    const { home, remote } = env
    seed(phase, env)
    const killed = yield* killAtPhase(phase, env)
    assert.isDefined(killed.reached, `the child ended before ${phase}: ${killed.stderr}`)
    assert.strictEqual(killed.signal, "SIGKILL", killed.stderr)

    // The state the crash left, through a read-only connection (the WAL stays as the kill left it).
    const pr = { repository: remote.path, number: PULL_REQUEST }
    const crashed = readDatabase(home, pr)
    const containersAtKill = containersOfHome(home)
    assert.deepStrictEqual(crashed.prRows, AT_KILL[phase].rows, "the PR's row as the kill left it")
    assert.deepStrictEqual(
      containersAtKill.map((c) => c.state),
      AT_KILL[phase].containers,
      "the containers as the kill left them"
    )
    assert.strictEqual(crashed.integrity, "ok", "integrity_check right after the kill")
    if (phase === "mid-migration") {
      // The kill landed inside the migration's transaction (after the switch to WAL): none of it may be visible.
      assert.include(killed.reached, "inTransaction=true")
      assert.strictEqual(crashed.journalMode, "wal")
      assert.strictEqual(crashed.schemaVersion, 1, "a migration killed before its commit is rolled back")
    }
    if (FENCED_AT_KILL.has(phase)) assert.lengthOf(crashed.fenced, 1, "the destroy fenced the row before the kill")

    const check = Effect.gen(function* () {
      const repo = yield* SandboxRepo
      const sandboxes = yield* SandboxService
      yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
      const rows = yield* repo.findAll()
      const prRows = rows.filter((row) => row.repository === remote.path && row.pullRequest === PULL_REQUEST)
      const containers = containersOfHome(home)
      entry.row = `${crashed.prRows.join("; ")} → ${prRows.length === 0 ? "(none)" : prRows.map(describeRow).join("; ")}`
      entry.containers = `${describeContainers(containersAtKill)} → ${describeContainers(containers)}`

      assertRowsAndContainersAgree(rows, containers)
      for (const id of crashed.fenced) {
        const row = rows.find((r) => r.id === id)
        assert.isTrue(
          row?.destroyFenced === true,
          `the fence of ${id} was lost: ${row === undefined ? "row gone" : describeRow(row)}`
        )
      }
      const after = readDatabase(home, pr)
      assert.strictEqual(after.integrity, "ok", "integrity_check after reconcile")
      assert.strictEqual(after.schemaVersion, Migrations.latestVersion)

      const steps: Array<string> = []
      for (const id of crashed.fenced) {
        const sandboxId = SandboxId.make(id)
        const restart = yield* Effect.flip(sandboxes.restart(sandboxId))
        assert.strictEqual(restart._tag, "SandboxConflict", `restart of a fenced row: ${restart.message}`)
        assert.include(restart.message, "not confirmed")
        const refused = yield* Effect.result(sandboxes.open({ input: remote.path, pr: PULL_REQUEST }))
        assert.isTrue(refused._tag === "Failure", "open of a PR whose sandbox is fenced must be refused")
        if (refused._tag === "Failure") {
          assert.strictEqual(refused.failure._tag, "SandboxConflict")
          assert.include(refused.failure.message, "not confirmed destroyed")
        }
        const exec = yield* Effect.flip(sandboxes.exec(sandboxId, ["true"], { timeoutMs: 5_000, maxOutputBytes: 1024 }))
        assert.strictEqual(exec._tag, "SandboxConflict", `exec in a fenced row: ${exec.message}`)
        assert.include(exec.message, "not confirmed")
        yield* sandboxes.delete(sandboxId)
        assert.deepStrictEqual(containersOf(id, { all: true }), [], "prbox rm left a container of the fenced row")
        assert.isTrue(Option.isNone(yield* repo.findById(sandboxId)), "prbox rm left the fenced row")
        steps.push("restart+exec+open refused (fenced), rm ok")
      }
      const opened = yield* sandboxes.open({ input: remote.path, pr: PULL_REQUEST })
      yield* sandboxes.awaitIdle(opened.id).pipe(bounded(`the open after ${phase} did not settle`, 45))
      const final = yield* rowOf(opened.id)
      assert.strictEqual(
        final.status,
        "running",
        `a new open after ${phase} did not reach running: ${describeRow(final)} (the open returned ${describeRow(opened)})`
      )
      assertRowsAndContainersAgree(yield* repo.findAll(), containersOfHome(home))
      steps.push(`open → running (${prRows.some((r) => r.id === opened.id) ? "same row" : "new row"})`)
      entry.outcome = steps.join(", ")
    })

    yield* check.pipe(
      Effect.provide(engineLayer({ home, runId: inject("testRunId"), config: { image: healthzGitImage() } }))
    )
  }).pipe(recordViolation(table, phase))

describe("crash safety (SIGKILL at each phase, then reconcile)", () => {
  for (const phase of PHASES) {
    it.live(`killed ${phase}: reconcile restores the invariants and the PR opens again`, () => crashAt(phase), 120_000)
  }
})
