import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import type { PoolEntry, Prebuild, Sandbox } from "@prbox/domain"
import { PrebuildRepo, SandboxRepo } from "@prbox/store"
import { Effect } from "effect"
import { afterAll, inject } from "vitest"
import { gitSync, makeRemote, pushPullRequest, type TestRemote } from "../../git/test/helpers.ts"
import { SETUP_INTERRUPTED } from "../src/create/Setup.ts"
import {
  MakePrebuild,
  PREBUILD_HOME_LABEL,
  PREBUILD_IMAGE_LABELS,
  PrebuildCleanup,
  Reconciler,
  SandboxService,
  WarmPool
} from "../src/index.ts"
import {
  assertRowsAndContainersAgree,
  type Container,
  containersOfHome,
  describeContainers,
  describeRow,
  killChildAt,
  recordViolation
} from "./crash/agree.ts"
import { childEnv, phaseLine } from "./crash/phases.ts"
import { isClaimPhase, POOL_PHASES, type PoolPhase, PR_ENV } from "./crash/pool-phases.ts"
import { engineLayer } from "./engine-layer.ts"
import { healthzGitImage } from "./git-image.ts"
import { bounded, openRunning } from "./harness.ts"
import { poolConfig, primed } from "./pool-support.ts"
import { gitIn, removePrebuildsOf } from "./prebuild-support.ts"

/**
 * Guarantee 5 for the warm pool and prebuilds (issue 30's crash rows): the
 * engine runs in a child process (pool-child.ts) with prebuilds and a pool
 * of one, is driven to a step of a claim, of a pool container's make or of
 * a prebuild's make, announces it and is killed there with SIGKILL. A fresh
 * engine on the same home then reconciles as the daemon does at start (the
 * sandboxes' passes, the prebuilds', the pool's), and: every container is
 * either an unclaimed pool container (a ready entry, running) or a
 * sandbox's (its row agreeing), never both; a claimed container never
 * returns to the pool; no container, folder, volume or image is left
 * without its owner; a half-made prebuild is gone. Then the PR opens again
 * with its own head and setup (or the prebuild is made again).
 *
 * The phases share one home, primed once (a prebuild of the base, the pool
 * filled), and run in order; each leaves the pool refilled for the next.
 */

const CHILD = fileURLToPath(new URL("./crash/pool-child.ts", import.meta.url))

interface Home {
  readonly home: string
  readonly remote: TestRemote
  readonly image: string
}

const lines = (args: ReadonlyArray<string>) =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

let made: Home | undefined
const homeOf = (): Home => {
  if (made !== undefined) return made
  const home = realpathSync(mkdtempSync(join(tmpdir(), "prbox-pool-crash-")))
  made = { home, remote: makeRemote(home), image: healthzGitImage() }
  return made
}

afterAll(() =>
  Effect.runPromise(
    Effect.sync(() => {
      if (made === undefined) return
      // The home's sandboxes and pool containers, and a prebuild's container a failed row left.
      const prebuilding = lines(["ps", "-aq", "--filter", `label=${PREBUILD_HOME_LABEL}=${made.home}`])
      const left = [...containersOfHome(made.home).map((c) => c.id), ...prebuilding]
      if (left.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...left], { stdio: "ignore" })
    }).pipe(
      Effect.andThen(made === undefined ? Effect.void : removePrebuildsOf(made.home)),
      Effect.ensuring(Effect.sync(() => made !== undefined && rmSync(made.home, { recursive: true, force: true })))
    )
  )
)

/** The engine in this process on the phases' home, as a restarted daemon has it. */
const inEngine = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.suspend(() => {
      const { home, image } = homeOf()
      return body.pipe(
        Effect.provide(engineLayer({ home, runId: inject("testRunId"), config: { image, ...poolConfig(1) } }))
      )
    })
  )

let primedOnce = false
/** The base's prebuild ready and the pool filled, once for all phases. */
const prime = Effect.suspend(() =>
  primedOnce
    ? Effect.void
    : inEngine(primed(homeOf().remote.path)).pipe(
        Effect.andThen(
          Effect.sync(() => {
            primedOnce = true
          })
        )
      )
)

/** The startup reconcile, in the daemon's order (apps/daemon/src/Daemon.ts): sandboxes, prebuilds, the pool. */
const reconcileAsDaemon = Effect.gen(function* () {
  yield* Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
  const prebuilds = yield* Effect.flatMap(PrebuildCleanup, (cleanup) => cleanup.reconcile())
  const pool = yield* Effect.flatMap(WarmPool, (warm) => warm.reconcile())
  assert.deepStrictEqual([...prebuilds.failures, ...pool.failures], [], "reconcile failures")
})

interface Snapshot {
  readonly rows: ReadonlyArray<Sandbox>
  readonly entries: ReadonlyArray<PoolEntry>
  readonly prebuilds: ReadonlyArray<Prebuild>
  readonly containers: ReadonlyArray<Container>
}

const snapshot = Effect.gen(function* () {
  const rows = yield* Effect.flatMap(SandboxRepo, (repo) => repo.findAll())
  const entries = yield* Effect.flatMap(WarmPool, (pool) => pool.list)
  const prebuilds = yield* Effect.flatMap(PrebuildRepo, (repo) => repo.list)
  return { rows, entries, prebuilds, containers: containersOfHome(homeOf().home) } satisfies Snapshot
})

/** A prebuild's id from its volume's or image's name (`prbox-prebuild-<id>[-home]`, `prbox-prebuild:<id>`). */
const prebuildIdOf = (name: string) => name.replace(/^prbox-prebuild[-:]/, "").replace(/-home$/, "")

/**
 * After reconcile: every container of the home is a ready pool entry's
 * (running, no row of its id) or a row's (guarantee 5), never both; every
 * sandbox folder has its entry or row; no prebuild is `making`, no prebuild
 * container is left, every prebuild volume and image is a ready prebuild's.
 */
const assertOwned = ({ rows, entries, prebuilds, containers }: Snapshot) => {
  const rowIds = new Set<string>(rows.map((row) => row.id))
  const running = new Set(containers.filter((c) => c.state === "running").map((c) => c.id))
  for (const entry of entries) {
    assert.strictEqual(entry.state, "ready", `pool entry ${entry.id} left ${entry.state}`)
    assert.isTrue(running.has(entry.containerId ?? ""), `pool entry ${entry.id}'s container does not run`)
    assert.isFalse(rowIds.has(entry.id), `${entry.id} is both a pool entry and a sandbox`)
    assert.isFalse(
      rows.some((row) => row.containerId === entry.containerId),
      `${entry.id}'s container is also a sandbox's`
    )
  }
  const pooled = new Set(entries.flatMap((entry) => (entry.containerId === null ? [] : [entry.containerId])))
  assertRowsAndContainersAgree(rows, containers, pooled)
  for (const container of containers) {
    assert.isTrue(
      pooled.has(container.id) || rows.some((row) => row.containerId === container.id),
      `container ${container.id.slice(0, 12)} (${container.state}) has neither a pool entry nor a row`
    )
  }
  const folders = join(homeOf().home, "sandboxes")
  const owners = new Set<string>([...rowIds, ...entries.map((entry) => entry.id)])
  for (const folder of existsSync(folders) ? readdirSync(folders) : []) {
    assert.isTrue(owners.has(folder), `sandbox folder ${folder} has neither a pool entry nor a row`)
  }
  const { home } = homeOf()
  assert.deepStrictEqual(
    prebuilds.filter((p) => p.state === "making").map((p) => p.id),
    [],
    "a prebuild left making"
  )
  assert.deepStrictEqual(
    lines(["ps", "-aq", "--filter", `label=${PREBUILD_HOME_LABEL}=${home}`]),
    [],
    "a prebuild's container left"
  )
  const ready = new Set(prebuilds.filter((p) => p.state === "ready").map((p) => p.id))
  const volumes = lines(["volume", "ls", "-q", "--filter", `label=${PREBUILD_HOME_LABEL}=${home}`])
  const images = lines([
    "images",
    "--filter",
    `label=${PREBUILD_IMAGE_LABELS.home}=${home}`,
    "--format",
    "{{.Repository}}:{{.Tag}}"
  ])
  for (const name of [...volumes, ...images]) {
    assert.isTrue(ready.has(prebuildIdOf(name)), `${name} is left of a prebuild that is not ready`)
  }
}

interface TableRow {
  phase: string
  atKill: string
  after: string
  outcome: string
}

const table: Array<TableRow> = []

afterAll(() => {
  const keys = ["phase", "atKill", "after", "outcome"] as const
  const header: TableRow = { phase: "phase", atKill: "at the kill", after: "after reconcile", outcome: "outcome" }
  const all = [header, ...table]
  const width = (key: keyof TableRow) => Math.max(...all.map((line) => line[key].length))
  const format = (line: TableRow) => keys.map((key) => line[key].padEnd(width(key))).join(" | ")
  console.log(["warm pool crash safety: phase → outcome", ...all.map(format)].join("\n"))
})

const describeState = (state: Snapshot, id: string | undefined) => {
  const row = state.rows.find((r) => r.id === id)
  const making = state.prebuilds.filter((p) => p.state === "making").length
  return [
    `row ${row === undefined ? "none" : describeRow(row)}`,
    `pool ${state.entries.map((e) => e.state).join("+") || "empty"}`,
    making > 0 ? `${making} prebuild making` : "",
    `ctrs ${describeContainers(state.containers)}`
  ]
    .filter((part) => part.length > 0)
    .join("; ")
}

/** Each phase opens its own PR. */
const prOf = (phase: PoolPhase) => 10 + POOL_PHASES.indexOf(phase)

const crashAt = (phase: PoolPhase) =>
  Effect.gen(function* () {
    const entry: TableRow = { phase, atKill: "-", after: "-", outcome: "-" }
    table.push(entry)
    yield* prime
    const { home, remote, image } = homeOf()
    const pr = prOf(phase)
    const head = pushPullRequest(remote.path, pr, { "pr.txt": phase })

    // Before the child: the pool holds one ready container (claims), none (a fill), or the base moved (a prebuild).
    const before = yield* inEngine(
      Effect.gen(function* () {
        const pool = yield* WarmPool
        // A claim's reopen that restarted its row made none: an open from the prebuild refills the pool.
        if (isClaimPhase(phase) && !(yield* pool.list).some((e) => e.state === "ready")) {
          pushPullRequest(remote.path, pr + 40, { "filler.txt": phase })
          yield* openRunning(remote.path, pr + 40)
          yield* pool.settled
        }
        if (phase === "pool-mid-make") yield* pool.collect(Date.now() + 24 * 60 * 60_000)
        if (phase === "prebuild-mid-make") {
          const moved = pushPullRequest(remote.path, 99, { "moved.txt": "moved" })
          gitSync(remote.path, "update-ref", "refs/heads/main", moved)
        }
        return yield* snapshot
      })
    )
    const ready = before.entries.filter((e) => e.state === "ready")
    if (isClaimPhase(phase)) assert.lengthOf(ready, 1, "the pool holds a container to claim")
    if (phase === "pool-mid-make") assert.lengthOf(before.entries, 0, "the pool was emptied")

    const killed = yield* killChildAt({
      script: CHILD,
      phase,
      expected: phaseLine(phase),
      env: { ...childEnv(home, remote.path, inject("testRunId"), image), [PR_ENV]: String(pr) },
      seconds: 180
    })
    assert.isDefined(killed.reached, `the child ended before ${phase}: ${killed.stderr}`)
    assert.strictEqual(killed.signal, "SIGKILL", killed.stderr)

    yield* inEngine(
      Effect.gen(function* () {
        const atKill = yield* snapshot
        const claimed = ready[0]?.id
        entry.atKill = describeState(atKill, isClaimPhase(phase) ? claimed : undefined)
        // Proof that the kill landed where the phase says.
        if (isClaimPhase(phase)) {
          const row = atKill.rows.find((r) => r.id === claimed)
          assert.isDefined(row, "the claim made the pool container the PR's row")
          assert.strictEqual(row?.pullRequest, pr)
          assert.strictEqual(row?.containerId, ready[0]?.containerId)
          // The claim's row is `starting` from its transaction; its one status write, `running`, also records
          // its workspace, so a kill at any step before leaves it without one.
          assert.strictEqual(row?.status, "starting")
          assert.isNull(row?.workspacePath, "the workspace is the running write's")
          assert.isFalse(
            atKill.entries.some((e) => e.id === claimed),
            "the claim took the entry"
          )
        }
        if (phase === "pool-mid-make") {
          assert.deepStrictEqual(
            atKill.entries.map((e) => e.state),
            ["making"]
          )
          assert.isTrue(
            atKill.containers.some((c) => c.state === "running" && !atKill.rows.some((r) => r.containerId === c.id))
          )
        }
        if (phase === "prebuild-mid-make") {
          assert.lengthOf(
            atKill.prebuilds.filter((p) => p.state === "making"),
            1
          )
        }

        yield* reconcileAsDaemon
        const after = yield* snapshot
        entry.after = describeState(after, isClaimPhase(phase) ? claimed : undefined)
        assertOwned(after)
        if (claimed !== undefined && isClaimPhase(phase)) {
          assert.isFalse(
            after.entries.some((e) => e.id === claimed),
            "a claimed container never returns to the pool"
          )
          assert.isFalse(
            after.entries.some((e) => e.containerId === ready[0]?.containerId),
            "a claimed container never returns to the pool"
          )
        }

        const sandboxes = yield* SandboxService
        if (phase === "prebuild-mid-make") {
          const again = yield* sandboxes.prebuild({ input: remote.path, pr }, () => Effect.void)
          assert.strictEqual(again.outcome, "refreshed")
          assert.strictEqual(again.prebuild.state, "ready")
          assertOwned(yield* snapshot)
          entry.outcome = `prebuild made again (${again.outcome})`
          return
        }
        // The PR opens again: its own head, its setup (or the row saying it did not finish); the pool refilled.
        const opened = yield* openRunning(remote.path, pr).pipe(bounded(`the open after ${phase}`, 120))
        assert.strictEqual(gitIn(opened, "rev-parse", "HEAD"), head, "the reopened sandbox holds the PR's head")
        const workspace = opened.workspacePath ?? ""
        assert.strictEqual(readFileSync(join(workspace, "pr.txt"), "utf8"), phase)
        const setupDone = existsSync(join(workspace, "post.txt"))
        assert.isTrue(
          setupDone || opened.setupError === SETUP_INTERRUPTED,
          `its setup ran, or the row says it did not finish (${opened.setupError ?? "no setupError"})`
        )
        yield* Effect.flatMap(WarmPool, (pool) => pool.settled)
        yield* Effect.flatMap(MakePrebuild, (maker) => maker.settled)
        assertOwned(yield* snapshot)
        entry.outcome = `open → running (${opened.id === claimed ? "same row" : "new row"}${setupDone ? "" : ", setup said unfinished"})`
      })
    )
  }).pipe(recordViolation(table, phase))

describe("crash safety of the warm pool and prebuilds (SIGKILL at each step, then the daemon's reconcile)", () => {
  for (const phase of POOL_PHASES) {
    it.live(
      `killed ${phase}: a pool container or a sandbox, never half of each; nothing orphaned`,
      () => crashAt(phase),
      420_000
    )
  }
})
