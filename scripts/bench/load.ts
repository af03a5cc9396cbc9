import { execFile } from "node:child_process"
import { Agent, type RequestOptions, request } from "node:http"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { socketPool } from "./socket-pool.ts"

export interface Answer {
  readonly status: number
  readonly bytes: number
  readonly body: string
}

/**
 * One request (over TCP, or a Unix socket with `socketPath`), GET unless
 * `options.method` says otherwise; `options.agent` keeps its connection
 * between calls; `keepBody` keeps the answer's text (else only its size).
 */
export const httpRequest = (options: RequestOptions, keepBody = false, body?: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ agent: false, ...options }, (res) => {
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
    req.end(body)
  })

/** Exact nearest-rank percentile of sorted samples. */
export const percentile = (sorted: Float64Array, p: number): number =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN)

/** What a pass of either loop reports; latencies are of "ok" answers only. */
export interface PassFigures {
  readonly seconds: number
  readonly ok: number
  /** Answers `send` called "rejected" (a 503 over a cap): counted, not timed. */
  readonly rejected: number
  /** Requests `send` threw for (an error, or an answer it did not expect); `firstFailure` says the first. */
  readonly failed: number
  readonly firstFailure: string | null
  readonly p50Ms: number
  readonly p99Ms: number
  readonly maxMs: number
  readonly requestsPerSecond: number
  /** This process's CPU use over the run, in cores: near 1, the generator itself was the limit. */
  readonly generatorCores: number
}

export interface LoadRun extends PassFigures {
  readonly connections: number
}

/** The figures of a pass both loops report: its "ok" latencies, elapsed time and this process's CPU use. */
const summarize = (latencies: ReadonlyArray<number>, started: number, cpuBefore: NodeJS.CpuUsage) => {
  const elapsedMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  const sorted = Float64Array.from(latencies).sort()
  return {
    seconds: elapsedMs / 1000,
    ok: sorted.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? (sorted[sorted.length - 1] ?? Number.NaN) : Number.NaN,
    requestsPerSecond: sorted.length / (elapsedMs / 1000),
    generatorCores: (cpu.user + cpu.system) / 1000 / elapsedMs
  }
}

/**
 * A closed-loop load generator: `connections` loops, each on its own
 * keep-alive agent (one connection), sending one request after another until
 * `durationMs` has passed. Latency is from the request's start to its answer's
 * last byte, for "ok" answers only; a failure is counted and the loop goes on.
 */
export const closedLoop = async (
  connections: number,
  durationMs: number,
  send: (agent: Agent) => Promise<"ok" | "rejected">
): Promise<LoadRun> => {
  const latencies: Array<number> = []
  let rejected = 0
  let failed = 0
  let firstFailure: string | null = null
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const deadline = started + durationMs
  const loop = async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        try {
          if ((await send(agent)) === "ok") latencies.push(performance.now() - t0)
          else rejected++
        } catch (error) {
          failed++
          firstFailure ??= error instanceof Error ? error.message : String(error)
        }
      }
    } finally {
      agent.destroy()
    }
  }
  await Promise.all(Array.from({ length: connections }, loop))
  return { connections, rejected, failed, firstFailure, ...summarize(latencies, started, cpuBefore) }
}

/** Its latencies run from each request's scheduled send time to its answer's last byte: queueing (anywhere) counts. */
export interface OpenLoopRun extends PassFigures {
  readonly ratePerSecond: number
  /** Requests scheduled (rate × duration); each is sent at its time, whether or not earlier ones have answered. */
  readonly scheduled: number
  /** How late this process sent, p99 (its own timer lag): large, the generator and not the daemon was slow. */
  readonly sendLagP99Ms: number
}

/**
 * An open-loop load generator: request i is due at `start + i / rate` and
 * handed to `send` when due (socket-pool.ts queues it while every connection
 * is busy); latency is measured from the due time, so a slow answer delays
 * none of the later sends and every queue shows in the figures (no
 * coordinated omission).
 */
export const openLoop = async (
  ratePerSecond: number,
  durationMs: number,
  send: () => Promise<"ok" | "rejected">
): Promise<OpenLoopRun> => {
  const total = Math.floor((ratePerSecond * durationMs) / 1000)
  const intervalMs = 1000 / ratePerSecond
  const latencies: Array<number> = []
  const lags: Array<number> = []
  // A count rather than the promises: every send kept until the end grew the old generation.
  let outstanding = 0
  let allAnswered = () => {}
  let rejected = 0
  let failed = 0
  let firstFailure: string | null = null
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const answered = () => {
    outstanding--
    if (outstanding === 0) allAnswered()
  }
  const fire = (due: number) => {
    outstanding++
    send()
      .then(
        (answer) => {
          if (answer === "ok") latencies.push(performance.now() - due)
          else rejected++
        },
        (error: unknown) => {
          failed++
          firstFailure ??= error instanceof Error ? error.message : String(error)
        }
      )
      .finally(answered)
  }
  await new Promise<void>((resolve) => {
    let next = 0
    const tick = () => {
      const now = performance.now()
      while (next < total && started + next * intervalMs <= now) {
        const due = started + next * intervalMs
        lags.push(now - due)
        fire(due)
        next++
      }
      if (next >= total) resolve()
      else setTimeout(tick, Math.max(0, started + next * intervalMs - performance.now()))
    }
    tick()
  })
  if (outstanding > 0) await new Promise<void>((resolve) => (allAnswered = resolve))
  return {
    ratePerSecond,
    scheduled: total,
    rejected,
    failed,
    firstFailure,
    sendLagP99Ms: percentile(Float64Array.from(lags).sort(), 99),
    ...summarize(latencies, started, cpuBefore)
  }
}

// --- the load in its own process -------------------------------------------------

/** `GET path` over the Unix socket; an answer is "ok" only with status 200 and exactly `expectedBytes`. */
export interface LoadTarget {
  readonly socketPath: string
  readonly path: string
  readonly expectedBytes: number
}

export type LoadSpec =
  | (LoadTarget & { readonly mode: "closed"; readonly connections: number; readonly durationMs: number })
  | (LoadTarget & {
      readonly mode: "open"
      readonly ratePerSecond: number
      readonly connections: number
      readonly durationMs: number
    })

export type LoadOutcome<S extends LoadSpec> = S extends { readonly mode: "open" } ? OpenLoopRun : LoadRun

/** An answer of a spec: a 503 (over the daemon's in-flight cap) is "rejected", anything unexpected throws. */
const verdict = (
  target: LoadTarget,
  answer: { readonly status: number; readonly bytes: number }
): "ok" | "rejected" => {
  if (answer.status === 200 && answer.bytes === target.expectedBytes) return "ok"
  if (answer.status === 503) return "rejected"
  throw new Error(`GET ${target.path} answered ${answer.status} with ${answer.bytes} bytes`)
}

/** Runs `spec` in this process (what loadgen.ts does in its own). */
export const runSpec = async (spec: LoadSpec): Promise<LoadRun | OpenLoopRun> => {
  if (spec.mode === "closed") {
    return closedLoop(spec.connections, spec.durationMs, async (agent) =>
      verdict(spec, await httpRequest({ socketPath: spec.socketPath, path: spec.path, agent }))
    )
  }
  const pool = await socketPool(spec.socketPath, spec.path, spec.connections)
  try {
    return await openLoop(spec.ratePerSecond, spec.durationMs, async () => verdict(spec, await pool.get()))
  } finally {
    pool.close()
  }
}

const LOADGEN = fileURLToPath(new URL("./loadgen.ts", import.meta.url))

/**
 * The generator's heap sized so that it hardly collects while it times (its
 * pauses would be timed as the daemon's latency): at 1,000 req/s for 8 s,
 * Node's defaults made 17 collections of up to 3.5 ms, these 2.
 */
const LOADGEN_NODE_FLAGS = ["--min-semi-space-size=16", "--max-semi-space-size=16", "--initial-old-space-size=128"]

/**
 * Runs `spec` in a separate Node process (loadgen.ts, which loads only
 * node:http), so the clients' CPU is not the bench's and the bench's
 * sampling does not delay them; resolves with the figures it printed.
 */
export const inOwnProcess = async <S extends LoadSpec>(spec: S): Promise<LoadOutcome<S>> => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...LOADGEN_NODE_FLAGS, LOADGEN, JSON.stringify(spec)],
    {
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024
    }
  )
  // JSON has no NaN (a figure of a pass where nothing answered): loadgen.ts's nulls are NaN again.
  return JSON.parse(stdout, (key, value) => (value === null && key !== "firstFailure" ? Number.NaN : value))
}
