import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Launch } from "@prbox/client"
import type { InstalledPackage } from "../package/install.ts"
import { LIB_DIR } from "../package/Layout.ts"
import { type Answer, httpRequest, sleep } from "./common.ts"
import { BENCH_LABEL } from "./engine.ts"

const START_TIMEOUT_MS = 60_000
const STOP_TIMEOUT_MS = 30_000

// --- the daemon as a child process ----------------------------------------------

/** A daemon's home in `root`: its config.json runs `image`, its containers labelled as the benchmarks' own. */
export const daemonHome = (root: string, image: string): string => {
  const home = join(root, "home")
  mkdirSync(home, { mode: 0o700 })
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ image, labels: { [BENCH_LABEL]: "1" }, healthTimeoutSeconds: 120 })
  )
  return home
}

export interface Daemon {
  readonly child: ChildProcess
  readonly pid: number
  readonly output: () => string
  readonly exited: () => boolean
  readonly stop: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** The daemon's bundle in an installed package: bin/prboxd links to the package's bin/prboxd.cjs, the bundle is beside it in lib/. */
export const installedDaemonMain = (installed: InstalledPackage): string =>
  join(dirname(realpathSync(installed.prboxd)), "..", LIB_DIR, "prboxd.js")

/** The daemon's entry in this checkout (its TypeScript sources). */
export const DAEMON_MAIN = fileURLToPath(new URL("../../apps/daemon/src/main.ts", import.meta.url))

/**
 * `node <flags> <entry> --foreground` on `home`, launched as `prbox` and
 * `prboxd` launch it (@prbox/client's Launch.ts); `env` adds to the bench's
 * environment; `entry` is the sources' main.ts unless a bundle's is given.
 */
export const spawnDaemon = (home: string, env: Readonly<Record<string, string>> = {}, entry = DAEMON_MAIN): Daemon => {
  const child = spawn(process.execPath, Launch.daemonArgs(entry, ["--foreground"]), {
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

/** Waits until the daemon's socket answers `GET /v1/health`; fails with its output if it exits or stays silent. */
export const waitForHealth = async (socketPath: string, daemon: Daemon): Promise<void> => {
  const deadline = performance.now() + START_TIMEOUT_MS
  for (;;) {
    if (daemon.exited()) throw new Error(`the daemon exited while starting:\n${daemon.output()}`)
    try {
      if ((await httpRequest({ socketPath, path: "/v1/health" })).status === 200) return
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`the daemon did not answer in time:\n${daemon.output()}`)
    await sleep(20)
  }
}

/** The daemon's API over its socket, JSON in and out. */
export const api = (socketPath: string, method: string, path: string, body?: unknown): Promise<Answer> => {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const headers =
    payload === undefined
      ? {}
      : { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) }
  return httpRequest({ socketPath, method, path, headers }, true, payload)
}

/** The answer's JSON, or an error naming `what` with its status and body when it is not a 200. */
export const expectJson = <A>(answer: Answer, what: string): A => {
  if (answer.status !== 200) throw new Error(`${what} answered ${answer.status}: ${answer.body}`)
  return JSON.parse(answer.body) as A
}

/** VmRSS of `pid` in MiB. */
export const rssMb = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(match[1]) / 1024
}

/** User + system CPU time of `pid`, in seconds. */
export const cpuSeconds = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  // Past the command: field 14 (utime) and 15 (stime) of proc(5) are at 11 and 12 here.
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** How often `watchDaemon` samples the daemon's memory. */
export const DAEMON_SAMPLE_MS = 100

export interface DaemonUse {
  /** The highest VmRSS seen, sampled every DAEMON_SAMPLE_MS, in MiB. */
  readonly rssPeakMb: number
  /** CPU use over the span, in cores (1 = one core busy the whole time). */
  readonly cores: number
}

/** Starts watching `pid`'s memory and CPU; `stop` ends the span and says what it used. */
export const watchDaemon = (pid: number): { readonly stop: () => DaemonUse } => {
  let rssPeak = rssMb(pid)
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, rssMb(pid))
    } catch {
      // the daemon is gone; the load reports it
    }
  }, DAEMON_SAMPLE_MS)
  const cpuBefore = cpuSeconds(pid)
  const started = performance.now()
  return {
    stop: () => {
      clearInterval(sampler)
      const seconds = (performance.now() - started) / 1000
      return { rssPeakMb: Math.max(rssPeak, rssMb(pid)), cores: (cpuSeconds(pid) - cpuBefore) / seconds }
    }
  }
}
