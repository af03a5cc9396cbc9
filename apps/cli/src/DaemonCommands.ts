import { existsSync, readFileSync, watch } from "node:fs"
import { PrboxClient, stopDaemon } from "@prbox/client"
import { Effect, Schedule } from "effect"
import { Command, Flag } from "effect/cli"
import { ensureRunning, home, launcher, running, withClient } from "./Connect.ts"
import { doctor } from "./Doctor.ts"
import { ExitCode, printJson, runCommand } from "./Exit.ts"
import * as NodeUserService from "./node/NodeUserService.ts"
import { followFlag, json, note, out } from "./Params.ts"
import { daemonServiceSpec, ServiceManagerFailed, UserService } from "./UserService.ts"

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

const MANAGER_COMMANDS = {
  systemd: "systemctl --user status prboxd",
  launchd: "launchctl print gui/$(id -u)/prbox.prboxd",
  none: "prbox daemon status"
} as const

/** The daemon the service manager started, once it answers (as long as `prbox` waits for one it starts itself). */
const serviceDaemonAnswers = (manager: keyof typeof MANAGER_COMMANDS) =>
  PrboxClient.use((client) => client.checkVersion).pipe(
    Effect.retry({
      schedule: Schedule.spaced("100 millis"),
      while: (error) => error._tag === "DaemonUnreachable"
    }),
    Effect.timeoutOrElse({
      duration: "20 seconds",
      orElse: () =>
        Effect.fail(
          new ServiceManagerFailed({
            operation: "start prboxd",
            message: `the service was started but prboxd does not answer on ${home.socketPath} after 20 s: see \`${MANAGER_COMMANDS[manager]}\` and ${home.logPath}`
          })
        )
    })
  )

const daemonInstall = Command.make("install", { json }, (config) =>
  runCommand(
    config,
    withClient(
      Effect.gen(function* () {
        const service = yield* UserService
        const before = yield* service.state
        const { file, changed } = yield* service.install(daemonServiceSpec(launcher, home, process.env))
        // A prboxd the CLI started holds this home's lock: the service's own would exit at once.
        const answering = yield* Effect.result(PrboxClient.use((client) => client.version))
        const onDemand = answering._tag === "Success" && answering.success.pid !== before.pid
        if (onDemand) {
          yield* note(`stopping prboxd (pid ${answering.success.pid}), started on demand, so that the service runs it`)
          yield* stopDaemon(answering.success.pid)
        }
        if (onDemand || !before.running || changed) yield* service.start(before.running && changed)
        const info = yield* serviceDaemonAnswers(before.manager)
        if (config.json) return printJson({ installed: true, file, changed, manager: before.manager, pid: info.pid })
        yield* out(
          `installed ${file}: prboxd ${info.version} runs as a ${before.manager} user service (pid ${info.pid}) and starts at login`
        )
      })
    ).pipe(Effect.provide(NodeUserService.layer))
  )
).pipe(
  Command.withDescription(
    [
      "Run prboxd as a user service, started at login and restarted when it fails:",
      "a systemd user unit (~/.config/systemd/user/prboxd.service) on Linux, a launchd agent",
      "(~/Library/LaunchAgents/prbox.prboxd.plist) on macOS, for this $PRBOX_HOME. Fails, writing",
      "nothing, when no user service manager answers (prboxd then keeps starting on demand).",
      "A prboxd started on demand is stopped and started again under the manager. Run it again",
      "after moving or upgrading prbox: it rewrites the unit and restarts the service."
    ].join("\n  ")
  ),
  Command.withShortDescription("Run prboxd as a user service (systemd/launchd), started at login.")
)

const daemonUninstall = Command.make("uninstall", { json }, (config) =>
  runCommand(
    config,
    Effect.gen(function* () {
      const { file, removed } = yield* (yield* UserService).uninstall
      if (config.json) return printJson({ removed, file })
      yield* out(
        removed
          ? `stopped prboxd and removed ${file}; commands start prboxd on demand again`
          : `prboxd is not installed as a user service${file === null ? "" : ` (no ${file})`}`
      )
    }).pipe(Effect.provide(NodeUserService.layer))
  )
).pipe(
  Command.withDescription(
    "Stop and disable the user service `prbox daemon install` set up, and remove its file. Commands start prboxd on demand again."
  ),
  Command.withShortDescription("Remove the user service; prboxd starts on demand again.")
)

const daemon = Command.make("daemon").pipe(
  Command.withDescription(
    "Manage prboxd, the per-user daemon: on demand (start, stop) or as a user service (install)."
  ),
  Command.withSubcommands([daemonStart, daemonStop, daemonStatus, daemonLogs, daemonInstall, daemonUninstall])
)

const doctorCommand = Command.make("doctor", { json }, (config) =>
  runCommand(
    config,
    withClient(
      Effect.gen(function* () {
        const report = yield* doctor(home)
        if (config.json) printJson(report)
        else
          for (const check of report.checks)
            yield* out(`${check.level.padEnd(4)}  ${check.name.padEnd(9)}  ${check.detail}`)
        if (!report.ok) process.exitCode = ExitCode.other
      })
    ).pipe(Effect.provide(NodeUserService.layer))
  )
).pipe(
  Command.withDescription(
    [
      "Check Node, Docker (warns below 28.3.3), git, free disk, state file modes, the daemon socket,",
      "the user service (installed? running? its file) and legacy sandboxes without a password.",
      "The engine check names the Docker engine prbox uses and where that came from (config.json's",
      "runtime, DOCKER_HOST, the Docker context, or the local socket), and whether it is local or remote:",
      "it bind-mounts a fresh folder of this machine into a container it creates (never starts) and removes.",
      'Changes nothing else. Exit 1 when a check fails. --json: {"ok", "checks": [{"name", "level", "detail"}],',
      '"service": {"manager", "available", "file", "installed", "running", "pid", "detail"},',
      '"engine": {"address", "source", "version", "apiVersion", "location": "local"|"remote"|"unknown", "detail"}}.'
    ].join("\n  ")
  ),
  Command.withShortDescription("Check the host, the daemon and its user service. Changes nothing.")
)

export const daemonCommands = [daemon, doctorCommand] as const
