import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { lifecyclePathTo, PullRequestNumber, SandboxId } from "@prbox/domain"
import { SandboxRepo, type StatusUpdate, layer as sqliteRepo } from "@prbox/store"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { defaultLimits } from "../../apps/daemon/src/Limits.ts"
import { REQUEST_TIMINGS_ENV, type TimingsDump } from "../../apps/daemon/src/RequestTimings.ts"
import { installPackage } from "../package/install.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  httpRequest,
  log,
  machineFacts,
  makeRoot,
  ms,
  percentile,
  round,
  sleep,
  table,
  writeResult
} from "./common.ts"
import {
  DAEMON_MAIN,
  DAEMON_SAMPLE_MS,
  type Daemon,
  type DaemonUse,
  installedDaemonMain,
  rssMb,
  spawnDaemon,
  waitForHealth,
  watchDaemon
} from "./daemon.ts"
import { BENCH_LABEL } from "./engine.ts"
import { inOwnProcess, type LoadRun, type LoadSpec, type LoadTarget, type OpenLoopRun } from "./load.ts"

export interface ApiOptions {
  readonly clients: number
  readonly seconds: number
  /** Open-loop rates, requests per second. */
  readonly rates: ReadonlyArray<number>
  /** Which prboxd: the bundle of the package as `npm install -g` installs it (the default), or the sources. */
  readonly daemon: "package" | "sources"
}

/** The daemon's bundled entry in a package installed into `prefix` (what the installed CLI starts). */
const installedDaemonEntry = async (prefix: string): Promise<string> =>
  installedDaemonMain(await installPackage(prefix))

const TARGETS = {
  /** Open-loop p99 at `openLoopRate` requests per second. */
  openLoopP99Ms: 10,
  openLoopRate: 1_000,
  /** The daemon's own p99 per list of 200 rows (RequestTimings.ts), over every run. */
  daemonP99Ms: 0.5,
  rssIdleMb: 80,
  rssPeakMb: 120
} as const
const LIST_PATH = "/v1/sandboxes?all=true"
const LIST_TIMING_KEY = "/v1/sandboxes"
const SETTLE_MS = 3_000
const WARMUP_MS = 1_000
const TIMINGS_WAIT_MS = 10_000
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

/** The daemon's own time per list request over one run (RequestTimings.ts), in ms: wall, and its CPU time. */
interface DaemonTime {
  readonly wallMs: Float64Array
  readonly p50Ms: number
  readonly p99Ms: number
  readonly cpuP50Ms: number
  readonly cpuP99Ms: number
}

/**
 * Asks the daemon (SIGUSR2) to write and clear its request timings, and reads
 * them: the list's samples since the last call.
 */
const takeTimings = async (daemon: Daemon, file: string): Promise<DaemonTime> => {
  if (existsSync(file)) unlinkSync(file)
  process.kill(daemon.pid, "SIGUSR2")
  const deadline = performance.now() + TIMINGS_WAIT_MS
  while (!existsSync(file)) {
    if (daemon.exited() || performance.now() > deadline) {
      throw new Error(`the daemon wrote no request timings to ${file}:\n${daemon.output()}`)
    }
    await sleep(10)
  }
  const dump = JSON.parse(readFileSync(file, "utf8")) as TimingsDump
  unlinkSync(file)
  const wallMs = Float64Array.from(dump[LIST_TIMING_KEY]?.wallMs ?? []).sort()
  const cpuMs = Float64Array.from(dump[LIST_TIMING_KEY]?.cpuMs ?? []).sort()
  return {
    wallMs,
    p50Ms: percentile(wallMs, 50),
    p99Ms: percentile(wallMs, 99),
    cpuP50Ms: percentile(cpuMs, 50),
    cpuP99Ms: percentile(cpuMs, 99)
  }
}

interface Measured<R> {
  readonly run: R
  readonly use: DaemonUse
  readonly daemon: DaemonTime
}

/** A warm-up pass (not counted), then the measured one: the load in its own process, the daemon watched. */
const measure = async <S extends LoadSpec>(
  daemon: Daemon,
  timingsFile: string,
  spec: S
): Promise<Measured<S extends { readonly mode: "open" } ? OpenLoopRun : LoadRun>> => {
  await inOwnProcess({ ...spec, durationMs: WARMUP_MS })
  await takeTimings(daemon, timingsFile)
  const watch = watchDaemon(daemon.pid)
  const run = await inOwnProcess(spec)
  const use = watch.stop()
  return { run, use, daemon: await takeTimings(daemon, timingsFile) }
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
  const timingsFile = join(root, "request-timings.json")
  const durationMs = options.seconds * 1000
  const startedAt = performance.now()
  const concurrencies = [...new Set([options.clients, ...(options.clients > cap ? [cap] : []), 1])]
  const closed: Array<Measured<LoadRun>> = []
  const open: Array<Measured<OpenLoopRun>> = []
  let daemon: Daemon | undefined
  let seeded = 0
  let seedMs = 0
  let startMs = 0
  let rssIdle = Number.NaN
  let rssIdleCold = Number.NaN
  let entry = DAEMON_MAIN
  let listed = { rows: 0, bytes: 0, running: 0 }
  let stopped: { code: number | null; signal: NodeJS.Signals | null } | undefined
  try {
    log(`seeding ${Object.values(MIX).reduce((a, b) => a + b, 0)} rows through the store ...`)
    let t = performance.now()
    seeded = await seedRows(home)
    seedMs = performance.now() - t

    if (options.daemon === "package") {
      log("installing the package (built when missing or stale) ...")
      entry = await installedDaemonEntry(join(root, "prefix"))
    }
    // The first start fills Node's compile cache (in the home), as a user's first start does; every
    // later start reads it and idles smaller. Both are measured; the target is for the usual, later one.
    log(`starting prboxd (${entry}) with an empty compile cache ...`)
    const first = spawnDaemon(home, {}, entry)
    try {
      await waitForHealth(socketPath, first)
      await sleep(SETTLE_MS)
      rssIdleCold = rssMb(first.pid)
    } finally {
      await first.stop()
    }
    log("starting it again, compile cache filled ...")
    t = performance.now()
    daemon = spawnDaemon(home, { [REQUEST_TIMINGS_ENV]: timingsFile }, entry)
    await waitForHealth(socketPath, daemon)
    startMs = performance.now() - t
    await sleep(SETTLE_MS)
    rssIdle = rssMb(daemon.pid)

    const answer = await httpRequest({ socketPath, path: LIST_PATH }, true)
    if (answer.status !== 200) throw new Error(`GET ${LIST_PATH} answered ${answer.status}: ${answer.body}`)
    const rows = JSON.parse(answer.body) as ReadonlyArray<{ readonly status: string }>
    if (rows.length !== seeded) throw new Error(`the list has ${rows.length} rows, ${seeded} were seeded`)
    listed = { rows: rows.length, bytes: answer.bytes, running: rows.filter((r) => r.status === "running").length }
    const target: LoadTarget = { socketPath, path: LIST_PATH, expectedBytes: listed.bytes }

    for (const connections of concurrencies) {
      log(`closed loop, ${connections} client(s): ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s ...`)
      closed.push(await measure(daemon, timingsFile, { ...target, mode: "closed", connections, durationMs }))
    }
    for (const ratePerSecond of options.rates) {
      log(`open loop, ${ratePerSecond} req/s: ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s ...`)
      open.push(
        await measure(daemon, timingsFile, { ...target, mode: "open", ratePerSecond, connections: cap, durationMs })
      )
    }
  } finally {
    if (daemon !== undefined) {
      stopped = await daemon.stop()
      log(`prboxd stopped (${stopped.signal ?? `exit ${stopped.code}`})`)
    }
    cleanupRoot(root)
    log(`removed ${root}`)
  }

  const main = closed[0]
  if (main === undefined) throw new Error("no load run")
  const all = [...closed, ...open]
  const rssPeak = Math.max(...all.map((m) => m.use.rssPeakMb))
  // Every list request of every run, pooled.
  const daemonP99 = percentile(Float64Array.from(all.flatMap((m) => [...m.daemon.wallMs])).sort(), 99)
  const atTarget = open.find((m) => m.run.ratePerSecond === TARGETS.openLoopRate)
  const met = {
    openLoopP99: atTarget !== undefined && atTarget.run.failed === 0 && atTarget.run.p99Ms <= TARGETS.openLoopP99Ms,
    daemonP99: daemonP99 <= TARGETS.daemonP99Ms,
    rssIdle: rssIdle <= TARGETS.rssIdleMb,
    rssPeak: rssPeak <= TARGETS.rssPeakMb
  }

  const out: Array<string> = []
  out.push("", "prbox bench api")
  out.push(describeMachine(facts))
  out.push(
    `prboxd: ${entry}`,
    `${listed.rows} rows (${Object.entries(MIX)
      .map(([k, v]) => `${v} ${k}`)
      .join(", ")}; the running rows' containers do not exist, so the startup reconcile stopped them: ` +
      `${listed.running} running now), seeded in ${ms(seedMs)}; prboxd up in ${ms(startMs)}; ` +
      `answer ${round(listed.bytes / 1024)} KiB; daemon in-flight cap ${cap}`,
    `GET ${LIST_PATH} over the socket from a separate load process (keep-alive; closed loop: node:http, open loop: ` +
      `a pool of ${cap} raw connections used in turn, reading Content-Length, one the daemon closes replaced, socket-pool.ts); ` +
      `${WARMUP_MS / 1000} s warm-up per row, not counted; exact nearest-rank percentiles over every 200; ` +
      "a 503 is counted, not timed. daemon p50/p99: its own wall time per list, arrival to answer handed to Node, " +
      "measured inside it; its CPU p99: the process's CPU time over the same spans",
    ""
  )
  const fine = (value: number) => (value < 1 ? `${value.toFixed(2)} ms` : ms(value))
  /** One row of a load table: the run, then what the daemon said and used over it. */
  const loadRow = (label: string, run: LoadRun | OpenLoopRun, middle: string, m: Measured<unknown>) => [
    label,
    ms(run.p50Ms),
    ms(run.p99Ms),
    ms(run.maxMs),
    middle,
    String(run.rejected),
    String(run.failed),
    fine(m.daemon.p50Ms),
    fine(m.daemon.p99Ms),
    fine(m.daemon.cpuP99Ms),
    `${Math.round(m.use.cores * 100)}%`,
    `${round(m.use.rssPeakMb)} MiB`
  ]
  const loadHeader = (label: string, middle: string) => [
    label,
    "p50",
    "p99",
    "max",
    middle,
    "503s",
    "errors",
    "daemon p50",
    "daemon p99",
    "its CPU p99",
    "daemon CPU",
    "RSS peak"
  ]
  out.push(
    table(
      loadHeader("closed loop", "req/s"),
      closed.map((m) =>
        loadRow(`${m.run.connections} client(s)`, m.run, String(Math.round(m.run.requestsPerSecond)), m)
      )
    ),
    "",
    table(
      loadHeader("open loop", "send lag p99"),
      open.map((m) => loadRow(`${m.run.ratePerSecond} req/s`, m.run, ms(m.run.sendLagP99Ms), m))
    ),
    "",
    table(
      ["target", "measured", "target", ""],
      [
        [
          `open-loop p99 at ${TARGETS.openLoopRate} req/s`,
          ms(atTarget?.run.p99Ms ?? Number.NaN),
          `≤ ${TARGETS.openLoopP99Ms} ms`,
          check(met.openLoopP99)
        ],
        [
          `daemon's own p99 per list of ${listed.rows} (every run)`,
          fine(daemonP99),
          `≤ ${TARGETS.daemonP99Ms} ms`,
          check(met.daemonP99)
        ],
        [
          `RSS idle (${SETTLE_MS / 1000} s after start, compile cache filled)`,
          `${round(rssIdle)} MiB`,
          `≤ ${TARGETS.rssIdleMb} MiB`,
          check(met.rssIdle)
        ],
        ["RSS idle, first start (empty compile cache)", `${round(rssIdleCold)} MiB`, "", ""],
        [
          `RSS peak under load (every ${DAEMON_SAMPLE_MS} ms)`,
          `${round(rssPeak)} MiB`,
          `≤ ${TARGETS.rssPeakMb} MiB`,
          check(met.rssPeak)
        ]
      ]
    )
  )
  for (const m of all) {
    if (m.run.firstFailure !== null) out.push(`${m.run.failed} request(s) failed, first: ${m.run.firstFailure}`)
  }
  const daemonFigures = (m: Measured<unknown>) => ({
    daemonP50Ms: round(m.daemon.p50Ms, 3),
    daemonP99Ms: round(m.daemon.p99Ms, 3),
    daemonCpuP50Ms: round(m.daemon.cpuP50Ms, 3),
    daemonCpuP99Ms: round(m.daemon.cpuP99Ms, 3),
    daemonSamples: m.daemon.wallMs.length,
    daemonCpuCores: round(m.use.cores, 2),
    rssPeakMb: round(m.use.rssPeakMb)
  })
  const file = writeResult("api", {
    daemon: options.daemon,
    daemonEntry: entry,
    clients: main.run.connections,
    p50Ms: round(main.run.p50Ms, 2),
    p99Ms: round(main.run.p99Ms, 2),
    requestsPerSecond: Math.round(main.run.requestsPerSecond),
    rssIdleMb: round(rssIdle),
    rssIdleFirstStartMb: round(rssIdleCold),
    rssLoadMb: round(rssPeak),
    daemonP99Ms: round(daemonP99, 3),
    rejected: main.run.rejected,
    target: {
      openLoopP99Ms: TARGETS.openLoopP99Ms,
      openLoopRatePerSecond: TARGETS.openLoopRate,
      daemonP99Ms: TARGETS.daemonP99Ms,
      rssIdleMb: TARGETS.rssIdleMb,
      rssPeakMb: TARGETS.rssPeakMb,
      met: Object.values(met).every((ok) => ok),
      each: met
    },
    runs: closed.map((m) => ({
      clients: m.run.connections,
      seconds: round(m.run.seconds, 2),
      ok: m.run.ok,
      rejected: m.run.rejected,
      failed: m.run.failed,
      p50Ms: round(m.run.p50Ms, 2),
      p99Ms: round(m.run.p99Ms, 2),
      maxMs: round(m.run.maxMs, 2),
      requestsPerSecond: Math.round(m.run.requestsPerSecond),
      generatorCpuCores: round(m.run.generatorCores, 2),
      ...daemonFigures(m)
    })),
    openLoop: open.map((m) => ({
      ratePerSecond: m.run.ratePerSecond,
      p50Ms: round(m.run.p50Ms, 2),
      p99Ms: round(m.run.p99Ms, 2),
      maxMs: round(m.run.maxMs, 2),
      scheduled: m.run.scheduled,
      ok: m.run.ok,
      rejected: m.run.rejected,
      failed: m.run.failed,
      sendLagP99Ms: round(m.run.sendLagP99Ms, 2),
      generatorCpuCores: round(m.run.generatorCores, 2),
      ...daemonFigures(m)
    })),
    rows: listed.rows,
    mix: MIX,
    responseBytes: listed.bytes,
    inFlightCap: cap,
    memoryUnit: "MiB (VmRSS / 1024)",
    client:
      "a separate process (scripts/bench/loadgen.ts), keep-alive: node:http for the closed loops, raw connections used in turn, reading Content-Length, for the open loops (socket-pool.ts: one the daemon closes is replaced, a request it closed unanswered sent again once)",
    warmupSeconds: WARMUP_MS / 1000,
    daemonStartMs: round(startMs),
    daemonExit: stopped ?? null,
    machine: facts,
    wallSeconds: round((performance.now() - startedAt) / 1000)
  })
  out.push("", `wrote ${file}`)
  process.stdout.write(`${out.join("\n")}\n`)
}
