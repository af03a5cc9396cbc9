import { existsSync, readFileSync, watch } from "node:fs"
import { PrboxClient, stopDaemon } from "@prbox/client"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { ensureRunning, home, running, withClient } from "./Connect.ts"
import { doctor } from "./Doctor.ts"
import { ExitCode, printJson, runCommand } from "./Exit.ts"
import { followFlag, json, note, out } from "./Params.ts"

/** Managing prboxd itself (start, stop, status, its log), and the doctor's checks. */

const daemonStart = Command.make("start", { json }, (config) =>
  runCommand(
    config,
    withClient(
      Effect.gen(function* () {
        const { info, started } = yield* ensureRunning(() => {})
        if (config.json) return printJson({ started, ...info })
        yield* out(`prboxd ${info.version} ${started ? "started" : "is already running"} (pid ${info.pid})`)
      })
    )
  )
).pipe(Command.withDescription("Start prboxd in the background (no-op when it runs)."))

const daemonStop = Command.make("stop", { json }, (config) =>
  runCommand(
    config,
    withClient(
      Effect.gen(function* () {
        const client = yield* PrboxClient
        const version = yield* Effect.result(client.version)
        if (version._tag === "Failure") {
          if (version.failure._tag !== "DaemonUnreachable") return yield* Effect.fail(version.failure)
          if (config.json) return printJson({ stopped: false, running: false })
          return yield* out("prboxd is not running")
        }
        yield* stopDaemon(version.success.pid)
        if (config.json) return printJson({ stopped: true, pid: version.success.pid })
        yield* out(`prboxd (pid ${version.success.pid}) stopped`)
      })
    )
  )
).pipe(Command.withDescription("Stop prboxd (SIGTERM) and wait until it has exited."))

const daemonStatus = Command.make("status", { json }, (config) =>
  runCommand(
    config,
    running((client) =>
      Effect.gen(function* () {
        const info = yield* client.version
        const health = yield* client.health
        if (config.json) return printJson({ ...info, health })
        yield* out(
          [
            `prboxd ${info.version} (pid ${info.pid}), API v${info.api.join(", v")}`,
            `home:     ${info.home}`,
            `socket:   ${home.socketPath}`,
            `log:      ${home.logPath}`,
            `uptime:   ${Math.round(health.uptimeMs / 1000)} s`,
            `requests: ${health.requests} in flight, ${health.streams} event stream(s)`
          ].join("\n")
        )
      })
    )
  )
).pipe(Command.withDescription("Show whether prboxd runs, its version and load (never starts it)."))

const daemonLogs = Command.make(
  "logs",
  {
    lines: Flag.Int("lines").pipe(Flag.withAlias("n"), Flag.withDescription("lines to show"), Flag.withDefault(50)),
    follow: followFlag("keep following")
  },
  (config) =>
    runCommand(
      { json: false },
      Effect.gen(function* () {
        if (!existsSync(home.logPath)) return yield* note(`no daemon log yet (${home.logPath})`)
        const text = readFileSync(home.logPath, "utf8")
        const lines = text.split("\n").filter((line) => line.length > 0)
        yield* Effect.sync(() =>
          process.stdout.write(
            lines
              .slice(-config.lines)
              .map((l) => `${l}\n`)
              .join("")
          )
        )
        if (!config.follow) return
        let offset = Buffer.byteLength(text)
        yield* Effect.callback<never>(() => {
          const watcher = watch(home.logPath, () => {
            const content = readFileSync(home.logPath)
            if (content.length < offset) offset = 0 // rotated
            process.stdout.write(content.subarray(offset))
            offset = content.length
          })
          return Effect.sync(() => watcher.close())
        })
      })
    )
).pipe(Command.withDescription("Print the daemon's log file."))

const daemon = Command.make("daemon").pipe(
  Command.withDescription("Manage prboxd, the per-user daemon."),
  Command.withSubcommands([daemonStart, daemonStop, daemonStatus, daemonLogs])
)

const doctorCommand = Command.make("doctor", { json }, (config) =>
  runCommand(
    config,
    withClient(
      Effect.gen(function* () {
        const checks = yield* doctor(home)
        if (config.json) printJson(checks)
        else
          for (const check of checks) yield* out(`${check.level.padEnd(4)}  ${check.name.padEnd(9)}  ${check.detail}`)
        if (checks.some((check) => check.level === "fail")) process.exitCode = ExitCode.other
      })
    )
  )
).pipe(
  Command.withDescription(
    "Check Node, Docker (warns below 28.3.3), git, free disk, state file modes, the daemon socket and legacy sandboxes without a password. Changes nothing."
  )
)

export const daemonCommands = [daemon, doctorCommand] as const
