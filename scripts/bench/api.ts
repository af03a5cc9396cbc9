import { randomBytes } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { lifecyclePathTo, PullRequestNumber, SandboxId } from "@prbox/domain"
import { SandboxRepo, type StatusUpdate, layer as sqliteRepo } from "@prbox/store"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { defaultLimits } from "../../apps/daemon/src/Limits.ts"
import {
  check,
  cleanupRoot,
  closedLoop,
  describeMachine,
  httpRequest,
  type LoadRun,
  log,
  machineFacts,
  makeRoot,
  ms,
  round,
  sleep,
  table,
  writeResult
} from "./common.ts"
import { DAEMON_SAMPLE_MS, type Daemon, rssMb, spawnDaemon, waitForHealth, watchDaemon } from "./daemon.ts"
import { BENCH_LABEL } from "./engine.ts"

export interface ApiOptions {
  readonly clients: number
  readonly seconds: number
}

const TARGETS = { p99Ms: 10, rssIdleMb: 80 } as const
const LIST_PATH = "/v1/sandboxes?all=true"
const SETTLE_MS = 3_000
const WARMUP_MS = 1_000
const REPOSITORY = "/bench/remote.git"

/**
 * 200 rows, the shape a long-used home has: mostly ended. The "running" rows
 * point at containers that do not exist, so the daemon's startup reconcile
 * marks them stopped (the list still returns all 200 rows).
 */
const MIX = { stopped: 150, error: 40, running: 10 } as const

/** Rows written through the store API (as the engine writes them), in `home`'s database. */
export const seedRows = async (home: string): Promise<number> => {
  const managed = ManagedRuntime.make(sqliteRepo({ stateDir: home }))
  try {
    const repo = await managed.runPromise(
      Effect.gen(function* () {
        return yield* SandboxRepo
      })
    )
    let pr = 0
    for (const [status, count] of Object.entries(MIX) as Array<[keyof typeof MIX, number]>) {
      for (let k = 0; k < count; k++) {
        pr += 1
        const id = SandboxId.make(randomBytes(6).toString("hex"))
        const now = Date.now() - 3_600_000 - pr * 60_000
        await managed.runPromise(
          repo.insert({
            id,
            provider: "git",
            host: "local",
            account: "",
            repository: REPOSITORY,
            pullRequest: PullRequestNumber.make(pr),
            accessPassword: Redacted.make(randomBytes(18).toString("base64url")),
            createdAt: now,
            lastActivityAt: now
          })
        )
        const steps = lifecyclePathTo(status)
        for (const to of steps) {
          const update: StatusUpdate =
            to === "starting"
              ? {
                  to,
                  containerId: randomBytes(32).toString("hex"),
                  workspacePath: join(home, "workspaces", id),
                  sourceBranch: `feature/bench-${pr}`,
                  sourceCommit: randomBytes(20).toString("hex")
                }
              : to === "running"
                ? { to, hostPort: 20_000 + pr, detail: "code-server is up" }
                : to === "stopped"
                  ? { to, containerId: null, hostPort: null, stoppedAt: now + 30 * 60_000 }
                  : to === "error"
                    ? { to, error: "setup [1/1] failed with exit code 1", stoppedAt: now }
                    : { to }
          await managed.runPromise(repo.updateStatus(id, update))
        }
      }
    }
    return pr
  } finally {
    await managed.dispose()
  }
}

interface LoadResult extends LoadRun {
  readonly rssPeakMb: number
  /** The most requests in flight `GET /v1/health` reported (sampled with the RSS; health is never refused). */
  readonly maxInFlight: number
  /** The daemon's CPU use over the run, in cores (1 = one core busy the whole time). */
  readonly daemonCores: number
}

/**
 * `clients` connections calling `GET /v1/sandboxes?all=true` back to back
 * (common.ts's closed loop); a 503 (over the daemon's in-flight cap) is
 * counted and retried at once.
 */
const load = async (
  socketPath: string,
  pid: number,
  clients: number,
  durationMs: number,
  expectedBytes: number
): Promise<LoadResult> => {
  let maxInFlight = 0
  let probing = false
  const prober = setInterval(() => {
    if (probing) return
    probing = true
    httpRequest({ socketPath, path: "/v1/health" }, true)
      .then((answer) => {
        const requests = (JSON.parse(answer.body) as { readonly requests?: number }).requests ?? 0
        maxInFlight = Math.max(maxInFlight, requests)
      })
      .catch(() => {})
      .finally(() => {
        probing = false
      })
  }, DAEMON_SAMPLE_MS)
  const daemonUse = watchDaemon(pid)
  try {
    const run = await closedLoop(clients, durationMs, async (agent) => {
      const answer = await httpRequest({ socketPath, path: LIST_PATH, agent })
      if (answer.status === 200 && answer.bytes === expectedBytes) return "ok"
      if (answer.status === 503) return "rejected"
      throw new Error(`GET ${LIST_PATH} answered ${answer.status} with ${answer.bytes} bytes`)
    })
    const use = daemonUse.stop()
    return { ...run, rssPeakMb: use.rssPeakMb, maxInFlight, daemonCores: use.cores }
  } finally {
    clearInterval(prober)
  }
}

export const runApi = async (options: ApiOptions): Promise<void> => {
  if (options.clients < 1) throw new Error("--clients must be at least 1")
  if (options.seconds < 1) throw new Error("--seconds must be at least 1")
  const facts = machineFacts()
  const cap = defaultLimits.maxRequests
  const root = makeRoot("api")
  const home = join(root, "home")
  mkdirSync(home, { mode: 0o700 })
  // No container is made; the label only lets the clean-up find one if something did.
  writeFileSync(join(home, "config.json"), JSON.stringify({ labels: { [BENCH_LABEL]: "1" } }))
  const socketPath = join(home, "run", "prboxd.sock")
  const startedAt = performance.now()
  const concurrencies = [...new Set([options.clients, ...(options.clients > cap ? [cap] : []), 1])]
  const runs: Array<LoadResult> = []
  let daemon: Daemon | undefined
  let seeded = 0
  let seedMs = 0
  let startMs = 0
  let rssIdle = Number.NaN
  let listed = { rows: 0, bytes: 0, running: 0, encodeMs: Number.NaN }
  let stopped: { code: number | null; signal: NodeJS.Signals | null } | undefined
  try {
    log(`seeding ${Object.values(MIX).reduce((a, b) => a + b, 0)} rows through the store ...`)
    let t = performance.now()
    seeded = await seedRows(home)
    seedMs = performance.now() - t

    log("starting prboxd ...")
    t = performance.now()
    daemon = spawnDaemon(home)
    await waitForHealth(socketPath, daemon)
    startMs = performance.now() - t
    await sleep(SETTLE_MS)
    rssIdle = rssMb(daemon.pid)

    const first = await httpRequest({ socketPath, path: LIST_PATH }, true)
    if (first.status !== 200) throw new Error(`GET ${LIST_PATH} answered ${first.status}: ${first.body}`)
    const rows = JSON.parse(first.body) as ReadonlyArray<{ readonly status: string }>
    if (rows.length !== seeded) throw new Error(`the list has ${rows.length} rows, ${seeded} were seeded`)
    // What encoding alone costs: JSON.stringify of the same 200 rows, in this process (a lower bound).
    const encodeRounds = 500
    const te = performance.now()
    for (let i = 0; i < encodeRounds; i++) JSON.stringify(rows)
    listed = {
      rows: rows.length,
      bytes: first.bytes,
      running: rows.filter((r) => r.status === "running").length,
      encodeMs: (performance.now() - te) / encodeRounds
    }

    for (const clients of concurrencies) {
      log(`${clients} client(s): ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s measured ...`)
      await load(socketPath, daemon.pid, clients, WARMUP_MS, listed.bytes)
      runs.push(await load(socketPath, daemon.pid, clients, options.seconds * 1000, listed.bytes))
    }
  } finally {
    if (daemon !== undefined) {
      stopped = await daemon.stop()
      log(`prboxd stopped (${stopped.signal ?? `exit ${stopped.code}`})`)
    }
    cleanupRoot(root)
    log(`removed ${root}`)
  }

  const main = runs[0]
  if (main === undefined) throw new Error("no load run")
  const rssLoad = main.rssPeakMb
  const out: Array<string> = []
  out.push("", "prbox bench api")
  out.push(describeMachine(facts))
  out.push(
    `${listed.rows} rows (${Object.entries(MIX)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")}; the running rows' containers do not exist, so the startup reconcile stopped them: ` +
      `${listed.running} running now), seeded in ${ms(seedMs)}; prboxd up in ${ms(startMs)}; ` +
      `answer ${round(listed.bytes / 1024)} KiB; daemon in-flight cap ${cap}`,
    `raw node:http over the socket, one keep-alive agent per client, GET ${LIST_PATH} back to back; ` +
      `${WARMUP_MS / 1000} s warm-up per row, not counted; exact nearest-rank percentiles over every 200; ` +
      "a 503 is counted and retried at once",
    ""
  )
  out.push(
    table(
      [
        "clients",
        "p50",
        "p99",
        "max",
        "req/s",
        "503s",
        "errors",
        "max in flight",
        "daemon CPU",
        "RSS peak",
        "p99 target",
        ""
      ],
      runs.map((r) => [
        String(r.connections),
        ms(r.p50Ms),
        ms(r.p99Ms),
        ms(r.maxMs),
        String(Math.round(r.requestsPerSecond)),
        String(r.rejected),
        String(r.failed),
        String(r.maxInFlight),
        `${Math.round(r.daemonCores * 100)}%`,
        `${round(r.rssPeakMb)} MiB`,
        `< ${TARGETS.p99Ms} ms`,
        check(r.p99Ms < TARGETS.p99Ms)
      ])
    ),
    ""
  )
  out.push(
    table(
      ["daemon RSS", "MiB", "target", ""],
      [
        [
          `idle (${SETTLE_MS / 1000} s after start)`,
          `${round(rssIdle)} MiB`,
          `< ${TARGETS.rssIdleMb} MiB`,
          check(rssIdle < TARGETS.rssIdleMb)
        ],
        [`peak under load, ${main.connections} clients (every ${DAEMON_SAMPLE_MS} ms)`, `${round(rssLoad)} MiB`, "", ""]
      ]
    )
  )
  out.push(
    "",
    `JSON.stringify of the same ${listed.rows} rows in this process: ${listed.encodeMs.toFixed(2)} ms ` +
      `(1 client: ${ms(runs.at(-1)?.p50Ms ?? Number.NaN)} p50 per call)`
  )
  for (const r of runs) {
    if (r.firstFailure !== null)
      out.push(`${r.connections} clients: ${r.failed} request(s) failed, first: ${r.firstFailure}`)
  }
  if (main.rejected > 0) {
    out.push(
      `${main.connections} clients exceed the daemon's cap of ${cap} requests in flight: ${main.rejected} answers were 503`
    )
  } else if (main.connections > cap) {
    out.push(
      `${main.connections} clients over a cap of ${cap}, yet no 503: /v1/health saw at most ${main.maxInFlight} request(s) ` +
        "in flight; the daemon does each list in one go on its event loop, the rest wait unread in the socket"
    )
  }
  const file = writeResult("api", {
    clients: main.connections,
    p50Ms: round(main.p50Ms, 2),
    p99Ms: round(main.p99Ms, 2),
    requestsPerSecond: Math.round(main.requestsPerSecond),
    rssIdleMb: round(rssIdle),
    rssLoadMb: round(rssLoad),
    rejected: main.rejected,
    target: {
      p99Ms: TARGETS.p99Ms,
      rssIdleMb: TARGETS.rssIdleMb,
      met: main.p99Ms < TARGETS.p99Ms && rssIdle < TARGETS.rssIdleMb
    },
    runs: runs.map((r) => ({
      clients: r.connections,
      seconds: round(r.seconds, 2),
      ok: r.ok,
      rejected: r.rejected,
      failed: r.failed,
      p50Ms: round(r.p50Ms, 2),
      p99Ms: round(r.p99Ms, 2),
      maxMs: round(r.maxMs, 2),
      requestsPerSecond: Math.round(r.requestsPerSecond),
      rssPeakMb: round(r.rssPeakMb),
      maxInFlight: r.maxInFlight,
      daemonCpuCores: round(r.daemonCores, 2)
    })),
    rows: listed.rows,
    mix: MIX,
    responseBytes: listed.bytes,
    inFlightCap: cap,
    memoryUnit: "MiB (VmRSS / 1024)",
    client: "node:http, keep-alive agent per client",
    warmupSeconds: WARMUP_MS / 1000,
    stringifyMs: round(listed.encodeMs, 3),
    daemonStartMs: round(startMs),
    daemonExit: stopped ?? null,
    machine: facts,
    wallSeconds: round((performance.now() - startedAt) / 1000)
  })
  out.push("", `wrote ${file}`)
  process.stdout.write(`${out.join("\n")}\n`)
}
