import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Launch } from "@prbox/client"
import { lifecyclePathTo, PullRequestNumber, SandboxId } from "@prbox/domain"
import { SandboxRepo, type StatusUpdate, layer as sqliteRepo } from "@prbox/store"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { defaultLimits } from "../../apps/daemon/src/Limits.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  log,
  machineFacts,
  makeRoot,
  ms,
  round,
  sleep,
  table,
  writeResult
} from "./common.ts"
import { BENCH_LABEL } from "./engine.ts"

export interface ApiOptions {
  readonly clients: number
  readonly seconds: number
}

const TARGETS = { p99Ms: 10, rssIdleMb: 80 } as const
const LIST_PATH = "/v1/sandboxes?all=true"
const SETTLE_MS = 3_000
const RSS_SAMPLE_MS = 100
const WARMUP_MS = 1_000
const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 30_000
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

// --- the daemon as a child process ----------------------------------------------

export interface Daemon {
  readonly child: ChildProcess
  readonly pid: number
  readonly output: () => string
  readonly exited: () => boolean
  readonly stop: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/**
 * `node <flags> apps/daemon/src/main.ts --foreground` on `home`, launched as
 * `prbox` and `prboxd` launch it (@prbox/client's Launch.ts); `env` adds to the bench's environment.
 */
const DAEMON_MAIN = fileURLToPath(new URL("../../apps/daemon/src/main.ts", import.meta.url))

export const spawnDaemon = (home: string, env: Readonly<Record<string, string>> = {}): Daemon => {
  const child = spawn(process.execPath, Launch.daemonArgs(DAEMON_MAIN, ["--foreground"]), {
    env: Launch.daemonEnv({ ...process.env, ...env, PRBOX_HOME: home }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-16_384)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  let done = false
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      done = true
      resolve({ code, signal })
    })
  )
  // Should the bench itself be stopped (Ctrl-C, an uncaught error), the daemon does not outlive it.
  const orphanGuard = () => {
    if (!done) child.kill("SIGKILL")
  }
  process.on("exit", orphanGuard)
  return {
    child,
    pid: child.pid ?? 0,
    output: () => output,
    exited: () => done,
    stop: async () => {
      if (!done) child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS)
      try {
        return await exit
      } finally {
        clearTimeout(timer)
        process.off("exit", orphanGuard)
      }
    }
  }
}

interface Answer {
  readonly status: number
  readonly bytes: number
  readonly body: string
}

/** One request over the socket; `agent` keeps the connection open between calls. */
const get = (socketPath: string, path: string, agent?: Agent, keepBody = false): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ socketPath, path, agent: agent ?? false }, (res) => {
      const chunks: Array<Buffer> = []
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        bytes += chunk.length
        if (keepBody) chunks.push(chunk)
      })
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, bytes, body: keepBody ? Buffer.concat(chunks).toString("utf8") : "" })
      )
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })

const waitForHealth = async (socketPath: string, daemon: Daemon): Promise<void> => {
  const deadline = performance.now() + START_TIMEOUT_MS
  for (;;) {
    if (daemon.exited()) throw new Error(`the daemon exited while starting:\n${daemon.output()}`)
    try {
      if ((await get(socketPath, "/v1/health")).status === 200) return
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`the daemon did not answer in time:\n${daemon.output()}`)
    await sleep(20)
  }
}

/** VmRSS of `pid` in MiB. */
const rssMb = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(match[1]) / 1024
}

/** User + system CPU time of `pid`, in seconds. */
const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // Past the command: field 14 (utime) and 15 (stime) of proc(5) are at 11 and 12 here.
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** Exact nearest-rank percentile of sorted samples. */
const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN)

interface LoadResult {
  readonly clients: number
  readonly seconds: number
  readonly ok: number
  readonly rejected: number
  readonly failed: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly requestsPerSecond: number
  readonly rssPeakMb: number
  /** The most requests in flight `GET /v1/health` reported (sampled with the RSS; health is never refused). */
  readonly maxInFlight: number
  /** The daemon's CPU use over the run, in cores (1 = one core busy the whole time). */
  readonly daemonCores: number
}

/**
 * `clients` loops, each on its own keep-alive agent (one connection), calling
 * `GET /v1/sandboxes?all=true` back to back until `durationMs` has passed.
 * Latency is request start to the last byte of the answer, for 200s only; a
 * 503 (over the daemon's in-flight cap) is counted and retried at once.
 */
const load = async (
  socketPath: string,
  pid: number,
  clients: number,
  durationMs: number,
  expectedBytes: number
): Promise<LoadResult> => {
  const latencies: Array<number> = []
  let rejected = 0
  let failed = 0
  let rssPeak = rssMb(pid)
  let maxInFlight = 0
  let probing = false
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssMb(pid))
    } catch {
      // the daemon is gone; the loops report it
    }
    if (probing) return
    probing = true
    get(socketPath, "/v1/health", undefined, true)
      .then((answer) => {
        const requests = (JSON.parse(answer.body) as { readonly requests?: number }).requests ?? 0
        maxInFlight = Math.max(maxInFlight, requests)
      })
      .catch(() => {})
      .finally(() => {
        probing = false
      })
  }, RSS_SAMPLE_MS)
  const cpuBefore = cpuSeconds(pid)
  const started = performance.now()
  const deadline = started + durationMs
  const client = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        const answer = await get(socketPath, LIST_PATH, agent)
        const t1 = performance.now()
        if (answer.status === 200 && answer.bytes === expectedBytes) latencies.push(t1 - t0)
        else if (answer.status === 503) rejected++
        else failed++
      }
    } finally {
      agent.destroy()
    }
  }
  try {
    await Promise.all(Array.from({ length: clients }, client))
  } finally {
    clearInterval(sampler)
  }
  const elapsed = (performance.now() - started) / 1000
  const cores = (cpuSeconds(pid) - cpuBefore) / elapsed
  rssPeak = Math.max(rssPeak, rssMb(pid))
  const sorted = Float64Array.from(latencies).sort()
  return {
    clients,
    seconds: elapsed,
    ok: sorted.length,
    rejected,
    failed,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
    requestsPerSecond: sorted.length / elapsed,
    rssPeakMb: rssPeak,
    maxInFlight,
    daemonCores: cores
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

    const first = await get(socketPath, LIST_PATH, undefined, true)
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
        String(r.clients),
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
        [`peak under load, ${main.clients} clients (every ${RSS_SAMPLE_MS} ms)`, `${round(rssLoad)} MiB`, "", ""]
      ]
    )
  )
  out.push(
    "",
    `JSON.stringify of the same ${listed.rows} rows in this process: ${listed.encodeMs.toFixed(2)} ms ` +
      `(1 client: ${ms(runs.at(-1)?.p50Ms ?? Number.NaN)} p50 per call)`
  )
  if (main.rejected > 0) {
    out.push(
      `${main.clients} clients exceed the daemon's cap of ${cap} requests in flight: ${main.rejected} answers were 503`
    )
  } else if (main.clients > cap) {
    out.push(
      `${main.clients} clients over a cap of ${cap}, yet no 503: /v1/health saw at most ${main.maxInFlight} request(s) ` +
        "in flight; the daemon does each list in one go on its event loop, the rest wait unread in the socket"
    )
  }
  const file = writeResult("api", {
    clients: main.clients,
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
      clients: r.clients,
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
