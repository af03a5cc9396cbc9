import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest, type IncomingHttpHeaders } from "node:http"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Launch } from "@prbox/client"
import { inject } from "vitest"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"

export const DAEMON_MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url))
export const healthzTag = imageTag(healthzImage)

/** A private PRBOX_HOME whose config runs the healthz image, keeps no warm pool and labels every container with the test run. */
export const makeHome = (prefix: string, config: Record<string, unknown> = {}): string => {
  const home = realpathSync(mkdtempSync(join(tmpdir(), `prbox-${prefix}-`)))
  writeConfig(home, config)
  return home
}

export const writeConfig = (home: string, config: Record<string, unknown>): void => {
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      image: healthzTag,
      labels: { [TEST_RUN_LABEL]: inject("testRunId") },
      healthTimeoutSeconds: 30,
      // No pool unless a test asks: with one, every open of a repository would prebuild its base in the background.
      warmPool: { size: 0, idleMinutes: 30 },
      ...config
    })
  )
}

export const socketOf = (home: string) => join(home, "run", "prboxd.sock")

export const containersOfHome = (home: string, running = false): Array<string> =>
  execFileSync("docker", ["ps", ...(running ? [] : ["-a"]), "-q", "--filter", `label=dev.prbox.home=${home}`], {
    encoding: "utf8"
  })
    .split("\n")
    .filter((id) => id.length > 0)

/** Removes every container of the home and the directory itself. */
export const removeHome = (home: string): void => {
  const left = containersOfHome(home)
  if (left.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...left], { stdio: "ignore" })
  rmSync(home, { recursive: true, force: true })
}

/**
 * Polls `check` until it holds, at most `timeoutMs`: synchronisation on an
 * observable state, never a fixed sleep.
 */
export const until = async (
  what: string,
  check: () => boolean | Promise<boolean>,
  { timeoutMs = 20_000, intervalMs = 50 } = {}
): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly text: string
  readonly json: () => unknown
}

/** One HTTP request over the daemon's Unix socket. */
export const call = (
  socketPath: string,
  options: {
    readonly method?: string
    readonly path: string
    readonly body?: string
    readonly headers?: Record<string, string>
  }
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        socketPath,
        method: options.method ?? "GET",
        path: options.path,
        headers: {
          ...(options.body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": String(Buffer.byteLength(options.body)) }),
          ...options.headers
        }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) })
        })
        res.on("error", reject)
      }
    )
    req.on("error", reject)
    if (options.body !== undefined) req.write(options.body)
    req.end()
  })

export const answers = async (socketPath: string): Promise<boolean> => {
  try {
    return (await call(socketPath, { path: "/version" })).status === 200
  } catch {
    return false
  }
}

/** A raw connection, for requests that must stall mid-way; `received` is everything read so far. */
export const rawConnection = (socketPath: string) => {
  const socket: Socket = connect(socketPath)
  let received = ""
  let closed = false
  socket.on("data", (chunk: Buffer) => {
    received += chunk.toString("utf8")
  })
  socket.on("close", () => {
    closed = true
  })
  socket.on("error", () => {})
  return {
    socket,
    write: (text: string) => socket.write(text),
    received: () => received,
    closed: () => closed,
    destroy: () => socket.destroy()
  }
}

export interface Daemon {
  readonly child: ChildProcess
  readonly pid: number
  readonly output: () => string
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** SIGTERM, and wait (bounded) for the exit. */
  readonly stop: () => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/**
 * Spawns `launcher --foreground` without waiting for it; by default `node <flags>
 * apps/daemon/src/main.ts` as `prbox` would.
 */
export const spawnDaemon = (
  home: string,
  env: Record<string, string> = {},
  launcher: Launch.DaemonLauncher = Launch.node(DAEMON_MAIN)
): Daemon => {
  const child = spawn(launcher.command, [...launcher.args, "--foreground"], {
    env: Launch.daemonEnv({ ...process.env, PRBOX_HOME: home, ...env }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8")
  })
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  return {
    child,
    pid: child.pid ?? 0,
    output: () => output,
    exit,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      try {
        return await exit
      } finally {
        clearTimeout(timer)
      }
    }
  }
}

/** Starts a daemon and waits (bounded) until it answers on its socket. */
export const startDaemon = async (
  home: string,
  env: Record<string, string> = {},
  launcher?: Launch.DaemonLauncher
): Promise<Daemon> => {
  const daemon = spawnDaemon(home, env, launcher)
  let exited = false
  void daemon.exit.then(() => {
    exited = true
  })
  await until("the daemon to answer", async () => {
    if (exited) throw new Error(`the daemon exited while starting: ${daemon.output()}`)
    return answers(socketOf(home))
  })
  return daemon
}

/** Reads an NDJSON stream until `stop` says so; resolves with the values read. */
export const readEvents = (
  socketPath: string,
  path: string,
  stop: (events: ReadonlyArray<Record<string, unknown>>) => boolean
): Promise<ReadonlyArray<Record<string, unknown>>> =>
  new Promise((resolve, reject) => {
    const events: Array<Record<string, unknown>> = []
    const req = httpRequest({ socketPath, path }, (res) => {
      let buffer = ""
      res.on("data", (chunk: Buffer) => {
        buffer += chunk.toString("utf8")
        let newline = buffer.indexOf("\n")
        while (newline !== -1) {
          const line = buffer.slice(0, newline)
          buffer = buffer.slice(newline + 1)
          if (line.length > 0) events.push(JSON.parse(line) as Record<string, unknown>)
          newline = buffer.indexOf("\n")
        }
        if (stop(events)) {
          req.destroy()
          resolve(events)
        }
      })
      res.on("end", () => resolve(events))
      res.on("error", () => resolve(events))
    })
    req.on("error", reject)
    req.end()
  })
