import { randomBytes } from "node:crypto"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { lifecyclePathTo, PullRequestNumber, type Sandbox, SandboxId, type SandboxStatus } from "@prbox/domain"
import { LABELS } from "@prbox/engine"
import type { StatusUpdate } from "@prbox/store"
import { Redacted } from "effect"
import { healthzImage } from "../images/healthz.ts"
import { ensureImage } from "../images/images.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  log,
  machineFacts,
  makeRoot,
  median,
  ms,
  round,
  table,
  writeResult
} from "./common.ts"
import { BENCH_LABEL, type Engine, makeEngine, type Recorder, type Span } from "./engine.ts"

export interface ReconcileOptions {
  readonly runs: number
}

const TARGET_MS = 1000
const CONTAINER_CONCURRENCY = 8
const REPOSITORY = "/bench/remote.git"

/** 1,000 rows: mostly ended, 100 running on real containers, a few the first pass must fix. */
const MIX = {
  running: 100,
  stopped: 560,
  error: 290,
  /** stopped, but pointing at a container Docker no longer has: the first pass forgets it. */
  gone: 30,
  /** creating/cloning/starting with no worker: the first pass marks them orphaned. */
  orphaned: 20
} as const

const newId = (): SandboxId => SandboxId.make(randomBytes(6).toString("hex"))

/** Runs `work` over `items` with at most `limit` in flight. */
const pool = async <A, B>(items: ReadonlyArray<A>, limit: number, work: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index] as A)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

const seedRow = async (
  engine: Engine,
  pullRequest: number,
  status: SandboxStatus,
  fields: Omit<StatusUpdate, "to"> = {}
): Promise<Sandbox> => {
  const { repo, run } = engine
  const id = newId()
  const now = Date.now() - 3_600_000
  let row = await run(
    repo.insert({
      id,
      provider: "git",
      host: "local",
      account: "",
      repository: REPOSITORY,
      pullRequest: PullRequestNumber.make(pullRequest),
      accessPassword: Redacted.make(randomBytes(18).toString("base64url")),
      createdAt: now,
      lastActivityAt: now
    })
  )
  const steps = lifecyclePathTo(status)
  for (const [index, to] of steps.entries()) {
    row = await run(repo.updateStatus(id, index === steps.length - 1 ? { ...fields, to } : { to }))
  }
  return row
}

const profileOf = (spans: ReadonlyArray<Span>): Record<string, { count: number; ms: number }> => {
  const out: Record<string, { count: number; ms: number }> = {}
  for (const span of spans) {
    const entry = out[span.op] ?? { count: 0, ms: 0 }
    entry.count += 1
    entry.ms += span.end - span.start
    out[span.op] = entry
  }
  return out
}

export const runReconcile = async (options: ReconcileOptions): Promise<void> => {
  if (options.runs < 5) throw new Error("--runs must be at least 5")
  const facts = machineFacts()
  const image = await ensureImage(healthzImage)
  const root = makeRoot("reconcile")
  const home = join(root, "home")
  mkdirSync(home, { mode: 0o700 })
  const recorder: Recorder = []
  const engine = await makeEngine({ home, image, recorder })
  const startedAt = performance.now()
  let first: { ms: number; changes: number; failures: number; spans: Array<Span> } | undefined
  const steady: Array<{ ms: number; changes: number; spans: Array<Span> }> = []
  let setupMs = { containers: 0, rows: 0 }
  const rowCount = Object.values(MIX).reduce((a, b) => a + b, 0)
  try {
    // 100 real containers, labelled as the engine labels a sandbox's, created in parallel (bounded).
    let t = performance.now()
    const runningIds = Array.from({ length: MIX.running }, newId)
    log(`creating ${MIX.running} containers (${CONTAINER_CONCURRENCY} at a time) ...`)
    const containers = await pool(runningIds, CONTAINER_CONCURRENCY, async (sandboxId) => {
      const pr = runningIds.indexOf(sandboxId) + 1
      const containerId = await engine.run(
        engine.runtime.provision({
          name: `prbox-bench-${sandboxId}`,
          image,
          args: ["--bind-addr", "0.0.0.0:8080", "--auth", "password", "/workspace"],
          env: { PASSWORD: randomBytes(12).toString("hex") },
          labels: {
            [BENCH_LABEL]: "1",
            [LABELS.sandbox]: sandboxId,
            [LABELS.pr]: String(pr),
            [LABELS.repo]: `local/${REPOSITORY}`,
            [LABELS.home]: home
          },
          binds: [],
          user: "1000:1000",
          workingDir: "/",
          port: 8080,
          capDrop: []
        })
      )
      const hostPort = await engine.run(engine.runtime.start(containerId))
      return { sandboxId, pr, containerId, hostPort }
    })
    setupMs = { ...setupMs, containers: performance.now() - t }
    log(`creating ${rowCount} rows through the store ...`)
    t = performance.now()
    // Running rows carry the ids the containers are labelled with.
    for (const c of containers) {
      const { repo, run } = engine
      const now = Date.now() - 60_000
      await run(
        repo.insert({
          id: c.sandboxId,
          provider: "git",
          host: "local",
          account: "",
          repository: REPOSITORY,
          pullRequest: PullRequestNumber.make(c.pr),
          accessPassword: Redacted.make(randomBytes(18).toString("base64url")),
          createdAt: now,
          lastActivityAt: now
        })
      )
      await run(repo.updateStatus(c.sandboxId, { to: "cloning" }))
      await run(
        repo.updateStatus(c.sandboxId, {
          to: "starting",
          containerId: c.containerId,
          workspacePath: join(home, "workspaces", c.sandboxId)
        })
      )
      await run(repo.updateStatus(c.sandboxId, { to: "running", hostPort: c.hostPort }))
    }
    let pr = MIX.running
    for (let k = 0; k < MIX.stopped; k++) {
      await seedRow(engine, ++pr, "stopped", { stoppedAt: Date.now() - 7_200_000, containerId: null })
    }
    for (let k = 0; k < MIX.error; k++) {
      await seedRow(engine, ++pr, "error", { error: "setup [1/1] failed with exit code 1", stoppedAt: Date.now() })
    }
    for (let k = 0; k < MIX.gone; k++) {
      await seedRow(engine, ++pr, "stopped", {
        stoppedAt: Date.now() - 7_200_000,
        containerId: randomBytes(32).toString("hex")
      })
    }
    const preContainer: ReadonlyArray<SandboxStatus> = ["creating", "cloning", "starting"]
    for (let k = 0; k < MIX.orphaned; k++) await seedRow(engine, ++pr, preContainer[k % 3] ?? "creating")
    setupMs = { ...setupMs, rows: performance.now() - t }

    const timedReconcile = async () => {
      recorder.length = 0
      const t0 = performance.now()
      const report = await engine.run(engine.reconciler.reconcile)
      const elapsed = performance.now() - t0
      return {
        ms: elapsed,
        changes: report.passes.reduce((sum, pass) => sum + pass.changes.length, 0),
        failures: report.passes.reduce((sum, pass) => sum + pass.failures.length, 0),
        spans: [...recorder]
      }
    }
    log("reconciling ...")
    first = await timedReconcile()
    if (first.failures > 0) throw new Error(`the first reconcile reported ${first.failures} failure(s)`)
    for (let i = 0; i < options.runs; i++) {
      const run = await timedReconcile()
      steady.push(run)
      if (run.changes !== 0) log(`steady-state run ${i + 1} still made ${run.changes} change(s)`)
    }
    const stillRunning = (await engine.run(engine.repo.findAll())).filter((r) => r.status === "running").length
    if (stillRunning !== MIX.running)
      throw new Error(`${stillRunning} rows running after reconcile, expected ${MIX.running}`)
  } finally {
    await engine.dispose()
    const removed = cleanupRoot(root)
    log(`removed ${removed} container(s) and ${root}`)
  }

  if (first === undefined) throw new Error("no reconcile ran")
  const steadyMs = median(steady.map((r) => r.ms))
  const firstProfile = profileOf(first.spans)
  const steadyProfiles = steady.map((r) => profileOf(r.spans))
  const ops = [...new Set([...Object.keys(firstProfile), ...steadyProfiles.flatMap((p) => Object.keys(p))])].sort()
  const steadyProfile = Object.fromEntries(
    ops.map((op) => [
      op,
      {
        count: median(steadyProfiles.map((p) => p[op]?.count ?? 0)),
        ms: round(median(steadyProfiles.map((p) => p[op]?.ms ?? 0)), 1)
      }
    ])
  )
  const out: Array<string> = []
  out.push("", "prbox bench reconcile")
  out.push(describeMachine(facts))
  out.push(
    `${rowCount} rows (${Object.entries(MIX)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")}), ${MIX.running} labelled running containers (${image}); ` +
      `set-up: containers ${Math.round(setupMs.containers / 1000)} s, rows ${Math.round(setupMs.rows / 1000)} s`,
    ""
  )
  const steadyValues = steady.map((r) => r.ms)
  out.push(
    table(
      ["full reconcile", "ms", "min", "max", "n", "changes", "target", ""],
      [
        [
          "first (changes state)",
          ms(first.ms),
          "",
          "",
          "1",
          String(first.changes),
          `< ${TARGET_MS} ms`,
          check(first.ms < TARGET_MS)
        ],
        [
          "steady state (median)",
          ms(steadyMs),
          ms(Math.min(...steadyValues)),
          ms(Math.max(...steadyValues)),
          String(steady.length),
          String(median(steady.map((r) => r.changes))),
          `< ${TARGET_MS} ms`,
          check(steadyMs < TARGET_MS)
        ]
      ]
    )
  )
  out.push("", "where the time goes (calls and summed ms inside one reconcile; steady state = median)")
  out.push(
    table(
      ["call", "first n", "first ms", "steady n", "steady ms"],
      ops.map((op) => [
        op,
        String(firstProfile[op]?.count ?? 0),
        ms(firstProfile[op]?.ms ?? 0),
        String(steadyProfile[op]?.count ?? 0),
        ms(steadyProfile[op]?.ms ?? 0)
      ])
    )
  )
  const file = writeResult("reconcile", {
    rows: rowCount,
    containers: MIX.running,
    ms: round(steadyMs),
    firstMs: round(first.ms),
    target: { maxMs: TARGET_MS, met: steadyMs < TARGET_MS && first.ms < TARGET_MS },
    steadyMs: steadyValues.map((v) => round(v)),
    firstChanges: first.changes,
    mix: MIX,
    image,
    machine: facts,
    profile: {
      first: Object.fromEntries(
        ops.map((op) => [op, { count: firstProfile[op]?.count ?? 0, ms: round(firstProfile[op]?.ms ?? 0) }])
      ),
      steady: steadyProfile
    },
    setupMs: { containers: round(setupMs.containers), rows: round(setupMs.rows) },
    wallSeconds: round((performance.now() - startedAt) / 1000)
  })
  out.push("", `wrote ${file}`)
  process.stdout.write(`${out.join("\n")}\n`)
}
