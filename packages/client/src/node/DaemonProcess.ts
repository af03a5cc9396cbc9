import { spawn } from "node:child_process"
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync } from "node:fs"
import { statePaths } from "@prbox/domain"
import type { VersionInfo } from "@prbox/protocol"
import { Duration, Effect, Schedule, Schema } from "effect"
import { type ClientError, DaemonUnreachable } from "../ClientErrors.ts"
import type { ClientHome } from "../Home.ts"
import { type DaemonLauncher, daemonEnv } from "../Launch.ts"
import { PrboxClient } from "../PrboxClient.ts"

/** How long a client waits for a daemon it started to answer, and for one it stopped to exit. */
const START_TIMEOUT = Duration.seconds(20)
const STOP_TIMEOUT = Duration.seconds(30)
const POLL = Schedule.spaced("100 millis")

/** SIGTERM was sent, but the daemon's process is still there after the deadline. */
export class DaemonDidNotStop extends Schema.TaggedError<DaemonDidNotStop>()("DaemonDidNotStop", {
  message: Schema.String,
  pid: Schema.Number
}) {}

const notRunning = (home: ClientHome, error: DaemonUnreachable) =>
  new DaemonUnreachable({
    message: existsSync(home.socketPath)
      ? error.message
      : `prboxd is not running for ${home.home} (start it with \`prbox daemon start\`, or run \`prbox open\`)`,
    socketPath: home.socketPath
  })

/** Checks that the daemon answers and speaks this client's API; never starts one. */
export const requireDaemon = (home: ClientHome): Effect.Effect<VersionInfo, ClientError, PrboxClient> =>
  PrboxClient.use((client) =>
    client.checkVersion.pipe(Effect.catchTag("DaemonUnreachable", (error) => Effect.fail(notRunning(home, error))))
  )

const lastLogLine = (path: string): string => {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").at(-1) ?? ""
  } catch {
    return ""
  }
}

const unreachable = (home: ClientHome, message: string) =>
  new DaemonUnreachable({ message, socketPath: home.socketPath })

/**
 * Starts prboxd detached with `launcher`, its stdout and stderr appended to
 * the daemon's log file, and polls until it answers on the socket: at most
 * START_TIMEOUT, and no longer than the process lives.
 */
export const startDaemon = Effect.fn("DaemonProcess.startDaemon")(function* (
  home: ClientHome,
  launcher: DaemonLauncher,
  notice: (line: string) => void
) {
  const client = yield* PrboxClient
  const cannotStart = (cause: unknown) =>
    unreachable(home, `cannot start prboxd: ${cause instanceof Error ? cause.message : String(cause)}`)
  const fd = yield* Effect.try({
    try: () => {
      mkdirSync(statePaths(home.home).logs, { recursive: true, mode: 0o700 })
      return openSync(home.logPath, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600)
    },
    catch: cannotStart
  })
  const child = yield* Effect.try({
    try: () =>
      spawn(launcher.command, [...launcher.args], {
        detached: true,
        stdio: ["ignore", fd, fd],
        cwd: home.home,
        env: daemonEnv({ ...process.env, PRBOX_HOME: home.home })
      }),
    catch: cannotStart
  }).pipe(Effect.ensuring(Effect.sync(() => closeSync(fd))))
  let exited: number | null = null
  child.on("exit", (code) => {
    exited = code ?? 1
  })
  // A launcher that cannot be run (ENOENT, EACCES) is reported as the exit below.
  child.on("error", () => {
    exited ??= 127
  })
  child.unref()
  const exitedWhileStarting = () => {
    const why = lastLogLine(home.logPath)
    return unreachable(home, `prboxd exited with code ${exited} while starting${why === "" ? "" : `: ${why}`}`)
  }
  const info = yield* client.checkVersion.pipe(
    Effect.retry({ schedule: POLL, while: (error) => error._tag === "DaemonUnreachable" && exited === null }),
    Effect.catchTag("DaemonUnreachable", (error) => Effect.fail(exited === null ? error : exitedWhileStarting())),
    Effect.timeoutOrElse({
      duration: START_TIMEOUT,
      orElse: () =>
        Effect.fail(
          unreachable(home, `prboxd did not answer within ${Duration.format(START_TIMEOUT)} (see ${home.logPath})`)
        )
    })
  )
  // Said once it answers: a daemon that could not start is reported by the failure alone.
  notice(`prboxd was not running; started it (pid ${info.pid}, log ${home.logPath})`)
  return info
})

/** The running daemon, started (and announced through `notice`) when there is none. */
export const ensureDaemon = Effect.fn("DaemonProcess.ensureDaemon")(function* (
  home: ClientHome,
  launcher: DaemonLauncher,
  notice: (line: string) => void
) {
  const client = yield* PrboxClient
  const first = yield* Effect.result(client.checkVersion)
  if (first._tag === "Success") return { info: first.success, started: false }
  if (first.failure._tag !== "DaemonUnreachable") return yield* Effect.fail(first.failure)
  const info = yield* startDaemon(home, launcher, notice)
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

/** SIGTERM to the daemon, then polls (at most STOP_TIMEOUT) until its process is gone. */
export const stopDaemon = Effect.fn("DaemonProcess.stopDaemon")(function* (pid: number) {
  yield* Effect.sync(() => {
    try {
      process.kill(pid, "SIGTERM")
    } catch {
      // Already gone.
    }
  })
  const running = Effect.suspend(() => (alive(pid) ? Effect.fail("running" as const) : Effect.void))
  yield* running.pipe(
    Effect.retry(POLL),
    Effect.timeoutOrElse({
      duration: STOP_TIMEOUT,
      orElse: () =>
        Effect.fail(
          new DaemonDidNotStop({
            message: `prboxd (pid ${pid}) did not stop within ${Duration.format(STOP_TIMEOUT)}`,
            pid
          })
        )
    })
  )
})
