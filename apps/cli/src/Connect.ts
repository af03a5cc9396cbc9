import { spawn } from "node:child_process"
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Client, type ClientError, DaemonUnreachable, Paths, PrboxClient, type VersionInfo } from "@prbox/protocol"
import { Effect, Schedule } from "effect"
import { daemonArgs, daemonEnv } from "../../daemon/src/Launch.ts"
import { CliFailure, ExitCode } from "./Exit.ts"

export const DAEMON_MAIN = fileURLToPath(new URL("../../daemon/src/main.ts", import.meta.url))

/** How long `prbox open` / `prbox daemon start` wait for a daemon they started to answer. */
const START_TIMEOUT_MS = 20_000
const STOP_TIMEOUT_MS = 30_000
const POLL = Schedule.spaced("100 millis")

export interface Home {
  readonly home: string
  readonly socketPath: string
  readonly logPath: string
}

export const currentHome = (): Home => {
  const home = Paths.prboxHome()
  return { home, socketPath: Paths.socketPath(home), logPath: Paths.daemonLogPath(home) }
}

/** A client of this PRBOX_HOME's daemon (its HTTP agent lives as long as the effect). */
export const withClient = <A, E, R>(home: Home, body: Effect.Effect<A, E, R | PrboxClient>) =>
  Effect.provide(body, Client.layer({ socketPath: home.socketPath }))

const notRunning = (home: Home, error: DaemonUnreachable) =>
  new DaemonUnreachable({
    message: existsSync(home.socketPath)
      ? error.message
      : `prboxd is not running for ${home.home} (start it with \`prbox daemon start\`, or run \`prbox open\`)`,
    socketPath: home.socketPath
  })

/** Checks that the daemon answers and speaks this client's API; never starts one. */
export const requireDaemon = (home: Home) =>
  Effect.gen(function* () {
    const client = yield* PrboxClient
    return yield* client.checkVersion.pipe(
      Effect.catchTag("DaemonUnreachable", (error) => Effect.fail(notRunning(home, error)))
    )
  })

const lastLogLine = (path: string): string => {
  try {
    const lines = readFileSync(path, "utf8").trimEnd().split("\n")
    return lines.at(-1) ?? ""
  } catch {
    return ""
  }
}

/**
 * Starts prboxd detached (`node <flags> apps/daemon/src/main.ts`), its stdout and
 * stderr appended to the daemon's log file, and waits (bounded) until it
 * answers on the socket.
 */
const startDaemon = (home: Home, notice: (line: string) => void) =>
  Effect.gen(function* () {
    const client = yield* PrboxClient
    mkdirSync(Paths.logDir(home.home), { recursive: true, mode: 0o700 })
    const fd = openSync(home.logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
    let exited: number | null = null
    const child = yield* Effect.try({
      try: () =>
        spawn(process.execPath, daemonArgs(), {
          detached: true,
          stdio: ["ignore", fd, fd],
          cwd: home.home,
          env: daemonEnv(process.env)
        }),
      catch: (cause) =>
        new CliFailure({
          tag: "DaemonUnreachable",
          message: `cannot start prboxd: ${cause instanceof Error ? cause.message : String(cause)}`,
          code: ExitCode.daemonUnreachable
        })
    }).pipe(Effect.ensuring(Effect.sync(() => closeSync(fd))))
    child.on("exit", (code) => {
      exited = code ?? 1
    })
    child.unref()
    notice(`prboxd was not running; started it (pid ${child.pid}, log ${home.logPath})`)
    const deadline = Date.now() + START_TIMEOUT_MS
    const attempt: Effect.Effect<VersionInfo, ClientError | CliFailure> = client.checkVersion.pipe(
      Effect.catchTag("DaemonUnreachable", (error): Effect.Effect<never, DaemonUnreachable | CliFailure> => {
        if (exited !== null) {
          const why = lastLogLine(home.logPath)
          return Effect.fail(
            new CliFailure({
              tag: "DaemonUnreachable",
              message: `prboxd exited with code ${exited} while starting${why === "" ? "" : `: ${why}`}`,
              code: ExitCode.daemonUnreachable
            })
          )
        }
        if (Date.now() > deadline) {
          return Effect.fail(
            new CliFailure({
              tag: "DaemonUnreachable",
              message: `prboxd did not answer within ${START_TIMEOUT_MS / 1000} s (see ${home.logPath})`,
              code: ExitCode.daemonUnreachable
            })
          )
        }
        return Effect.fail(error)
      })
    )
    return yield* attempt.pipe(Effect.retry({ schedule: POLL, while: (error) => error._tag === "DaemonUnreachable" }))
  })

/** The running daemon, started (and announced) when there is none. */
export const ensureDaemon = (home: Home, notice: (line: string) => void) =>
  Effect.gen(function* () {
    const client = yield* PrboxClient
    const first = yield* Effect.result(client.checkVersion)
    if (first._tag === "Success") return { info: first.success, started: false }
    if (first.failure._tag !== "DaemonUnreachable") return yield* Effect.fail(first.failure)
    const info: VersionInfo = yield* startDaemon(home, notice)
    return { info, started: true }
  })

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return typeof cause === "object" && cause !== null && "code" in cause && cause.code === "EPERM"
  }
}

/** SIGTERM to the daemon, then waits (bounded) until its process is gone. */
export const stopDaemon = (pid: number) =>
  Effect.gen(function* () {
    yield* Effect.sync(() => {
      try {
        process.kill(pid, "SIGTERM")
      } catch {
        // Already gone.
      }
    })
    const deadline = Date.now() + STOP_TIMEOUT_MS
    const gone = Effect.suspend((): Effect.Effect<void, CliFailure | "running"> => {
      if (!alive(pid)) return Effect.void
      if (Date.now() > deadline) {
        return Effect.fail(
          new CliFailure({
            tag: "Internal",
            message: `prboxd (pid ${pid}) did not stop within ${STOP_TIMEOUT_MS / 1000} s`,
            code: ExitCode.other
          })
        )
      }
      return Effect.fail("running" as const)
    })
    yield* gone.pipe(Effect.retry({ schedule: POLL, while: (error) => error === "running" }))
  })
