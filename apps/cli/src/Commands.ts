import { spawn } from "node:child_process"
import { existsSync, readFileSync, watch } from "node:fs"
import { resolve as resolvePath } from "node:path"
import { createInterface } from "node:readline/promises"
import { describeEvent } from "@prbox/domain"
import { type ClientError, PrboxClient, type PrboxClientShape, type SandboxView } from "@prbox/protocol"
import { Effect, Option, Stream } from "effect"
import { Argument, Command, Completions, Flag } from "effect/cli"
import { currentHome, ensureDaemon, requireDaemon, stopDaemon, withClient } from "./Connect.ts"
import { doctor } from "./Doctor.ts"
import { CliFailure, ExitCode, exitCodesHelp, printJson, runCommand, usageError } from "./Exit.ts"
import { describe, sandboxTable } from "./Format.ts"
import { followUntilReady } from "./Progress.ts"

export const CLI_VERSION = "0.1.0"

const home = currentHome()

// --- shared parameters ---------------------------------------------------------

const json = Flag.Boolean("json").pipe(
  Flag.withDescription('print JSON on stdout; a failure prints {"error":{"tag","message"}}'),
  Flag.withDefault(false)
)
const idArgument = Argument.String("id").pipe(
  Argument.withDescription("a sandbox id (a unique prefix is enough) or its pull request URL / owner/repo#N")
)
const prFlag = Flag.Int("pr").pipe(
  Flag.withDescription("the pull request number, for a plain git URL or path"),
  Flag.optional
)
const waitFlag = Flag.Boolean("wait").pipe(
  Flag.withDescription("follow progress until the sandbox runs (--no-wait: return once accepted)"),
  Flag.withDefault(true)
)
const yesFlag = Flag.Boolean("yes").pipe(
  Flag.withAlias("y"),
  Flag.withDescription("act without asking for confirmation"),
  Flag.withDefault(false)
)
const dryRunFlag = Flag.Boolean("dry-run").pipe(
  Flag.withDescription("only show what would be done"),
  Flag.withDefault(false)
)

// --- helpers -------------------------------------------------------------------

const out = (text: string) => Effect.sync(() => process.stdout.write(`${text}\n`))
const note = (text: string) => Effect.sync(() => process.stderr.write(`prbox: ${text}\n`))

/** A local path is sent absolute: the daemon resolves relative paths against its own directory. */
const localize = (input: string): string =>
  !/^[A-Za-z][A-Za-z0-9+.-]*:/.test(input) && existsSync(input) ? resolvePath(input) : input

const optionalNumber = (value: Option.Option<number>) => Option.getOrUndefined(value)

/** The body, with a client of the running daemon (never starts one). */
const connected = <A, E>(body: (client: PrboxClientShape) => Effect.Effect<A, E>) =>
  withClient(
    home,
    Effect.gen(function* () {
      yield* requireDaemon(home)
      return yield* body(yield* PrboxClient)
    })
  )

const resolveId = (client: PrboxClientShape, input: string, pr?: number): Effect.Effect<SandboxView, ClientError> =>
  client.resolve(localize(input), pr)

const isTty = (json: boolean) => !json && process.stderr.isTTY === true

const readyLines = (view: SandboxView) =>
  [`sandbox ${view.id} is running: ${view.url ?? "(no URL)"}`, `password: run \`prbox password ${view.id}\``].join("\n")

const openBrowser = (url: string) =>
  Effect.sync(() => {
    const command = process.env.BROWSER ?? (process.platform === "darwin" ? "open" : "xdg-open")
    try {
      const child = spawn(command, [url], { detached: true, stdio: "ignore" })
      child.on("error", () => process.stderr.write(`prbox: could not start ${command}; open ${url} yourself\n`))
      child.unref()
    } catch {
      process.stderr.write(`prbox: could not start ${command}; open ${url} yourself\n`)
    }
  })

const confirm = (question: string, yes: boolean) =>
  Effect.gen(function* () {
    if (yes) return true
    if (process.stdin.isTTY !== true) {
      return yield* usageError("refusing to act without confirmation: pass --yes (or --dry-run to only look)")
    }
    const answer = yield* Effect.promise(async () => {
      const rl = createInterface({ input: process.stdin, output: process.stderr })
      try {
        return await rl.question(`${question} [y/N] `)
      } finally {
        rl.close()
      }
    })
    return /^y(es)?$/i.test(answer.trim())
  })

const failIfFailures = (failures: ReadonlyArray<{ readonly sandboxId: string; readonly detail: string }>) =>
  Effect.gen(function* () {
    if (failures.length === 0) return
    for (const failure of failures) yield* note(`failed: ${failure.sandboxId}: ${failure.detail}`)
    return yield* new CliFailure({
      tag: "CleanupIncomplete",
      message: `${failures.length} action(s) failed`,
      code: ExitCode.other
    })
  })

// --- commands ------------------------------------------------------------------

const open = Command.make(
  "open",
  {
    input: Argument.String("pull-request").pipe(
      Argument.withDescription("a pull request URL, owner/repo#N, or a git URL or path with --pr N")
    ),
    pr: prFlag,
    ref: Flag.String("ref").pipe(Flag.withDescription("fetch this ref instead of the provider's"), Flag.optional),
    browser: Flag.Boolean("browser").pipe(
      Flag.withDescription("open the sandbox in a browser"),
      Flag.withDefault(false)
    ),
    wait: waitFlag,
    json
  },
  (config) =>
    runCommand(
      config,
      withClient(
        home,
        Effect.gen(function* () {
          const since = Date.now()
          yield* ensureDaemon(home, (line) => process.stderr.write(`prbox: ${line}\n`))
          const client = yield* PrboxClient
          const pr = optionalNumber(config.pr)
          const ref = Option.getOrUndefined(config.ref)
          const opened = yield* client.open({
            input: localize(config.input),
            ...(pr === undefined ? {} : { pr }),
            ...(ref === undefined ? {} : { ref })
          })
          if (!config.wait) {
            if (config.json) return printJson(opened)
            return yield* out(`sandbox ${opened.id} is ${opened.status}; follow it with \`prbox logs -f ${opened.id}\``)
          }
          const ready = yield* followUntilReady(client, opened, since, { tty: isTty(config.json) })
          if (config.json) printJson(ready)
          else yield* out(readyLines(ready))
          if (config.browser && ready.url !== null) yield* openBrowser(ready.url)
        })
      )
    )
).pipe(
  Command.withDescription(
    "Open a pull request in a sandbox (starting prboxd if needed), follow its progress, and print its URL. Exits 0 only once it runs."
  )
)

const ls = Command.make(
  "ls",
  {
    all: Flag.Boolean("all").pipe(
      Flag.withAlias("a"),
      Flag.withDescription("include stopped and failed sandboxes"),
      Flag.withDefault(false)
    ),
    json
  },
  (config) =>
    runCommand(
      config,
      connected((client) =>
        Effect.gen(function* () {
          const views = yield* client.list({ all: config.all })
          if (config.json) return printJson(views)
          if (views.length === 0) {
            return yield* out(config.all ? "no sandboxes" : "no active sandboxes (prbox ls -a shows all)")
          }
          yield* out(sandboxTable(views, Date.now()))
        })
      )
    )
).pipe(Command.withDescription("List sandboxes: id, PR, repository, status, age, URL."))

const status = Command.make("status", { id: idArgument, pr: prFlag, json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const view = yield* resolveId(client, config.id, optionalNumber(config.pr))
        if (config.json) return printJson(view)
        yield* out(describe(view, Date.now()))
      })
    )
  )
).pipe(Command.withDescription("Show one sandbox."))

const stop = Command.make("stop", { id: idArgument, json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const view = yield* resolveId(client, config.id)
        const stopped = yield* client.stop(view.id)
        if (config.json) return printJson(stopped)
        yield* out(`sandbox ${stopped.id} is ${stopped.status}`)
      })
    )
  )
).pipe(Command.withDescription("Stop a sandbox (its workspace is kept; `prbox restart` or `prbox open` resumes it)."))

const restart = Command.make("restart", { id: idArgument, wait: waitFlag, json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const since = Date.now()
        const view = yield* resolveId(client, config.id)
        const restarted = yield* client.restart(view.id)
        if (!config.wait) {
          if (config.json) return printJson(restarted)
          return yield* out(`sandbox ${restarted.id} is ${restarted.status}`)
        }
        const ready = yield* followUntilReady(client, restarted, since, { tty: isTty(config.json) })
        if (config.json) return printJson(ready)
        yield* out(readyLines(ready))
      })
    )
  )
).pipe(Command.withDescription("Restart a stopped sandbox and follow it until it runs."))

const rm = Command.make(
  "rm",
  {
    id: idArgument,
    force: Flag.Boolean("force").pipe(
      Flag.withAlias("f"),
      Flag.withDescription("stop a live sandbox first"),
      Flag.withDefault(false)
    ),
    json
  },
  (config) =>
    runCommand(
      config,
      connected((client) =>
        Effect.gen(function* () {
          const view = yield* resolveId(client, config.id)
          yield* client.remove(view.id, { force: config.force })
          if (config.json) return printJson({ removed: view.id })
          yield* out(`removed sandbox ${view.id}`)
        })
      )
    )
).pipe(
  Command.withDescription(
    "Delete a sandbox: container, workspace and row. A live one needs --force. Retries a destroy that Docker did not confirm."
  )
)

const time = (at: number) => new Date(at).toISOString().slice(11, 19)

const logs = Command.make(
  "logs",
  {
    id: idArgument,
    follow: Flag.Boolean("follow").pipe(
      Flag.withAlias("f"),
      Flag.withDescription("keep following new lines"),
      Flag.withDefault(false)
    ),
    json
  },
  (config) =>
    runCommand(
      config,
      connected((client) =>
        Effect.gen(function* () {
          const view = yield* resolveId(client, config.id)
          if (config.follow) {
            // The stream replays the log, then follows: one path, no gap.
            return yield* client
              .events(view.id, { after: 0 })
              .pipe(
                Stream.runForEach((event) =>
                  config.json ? Effect.sync(() => printJson(event)) : out(`${time(event.at)} ${describeEvent(event)}`)
                )
              )
          }
          let after = 0
          while (true) {
            const page = yield* client.logs(view.id, { after, limit: 1000 })
            for (const event of page.lines) {
              if (config.json) printJson(event)
              else yield* out(`${time(event.at)} ${describeEvent(event)}`)
            }
            after = page.next
            if (!page.more) break
          }
        })
      )
    )
).pipe(Command.withDescription("Print a sandbox's progress log (-f: and follow it)."))

const exec = Command.make(
  "exec",
  {
    id: idArgument,
    timeout: Flag.Int("timeout").pipe(
      Flag.withDescription("seconds before giving up on the command"),
      Flag.withDefault(300)
    ),
    command: Argument.String("command").pipe(
      Argument.withDescription("the command and its arguments, after --"),
      Argument.variadic({ min: 1 })
    ),
    json
  },
  (config) =>
    runCommand(
      config,
      connected((client) =>
        Effect.gen(function* () {
          if (config.timeout < 1 || config.timeout > 3600) {
            return yield* usageError("--timeout must be between 1 and 3600 seconds")
          }
          const view = yield* resolveId(client, config.id)
          const result = yield* client.exec(view.id, { argv: config.command, timeoutMs: config.timeout * 1000 })
          if (config.json) printJson(result)
          else process.stdout.write(result.output)
          if (result.truncated && !config.json) yield* note("output truncated")
          if (result.timedOut) {
            if (!config.json) yield* note(`the command did not finish within ${config.timeout} s`)
            process.exitCode = ExitCode.execTimeout
            return
          }
          process.exitCode = result.exitCode ?? ExitCode.other
        })
      )
    )
).pipe(
  Command.withDescription(
    "Run a command in a running sandbox as its workspace's owner (no stdin): prbox exec <id> -- <cmd...>. Exits with the command's exit code."
  )
)

const password = Command.make("password", { id: idArgument, json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const view = yield* resolveId(client, config.id)
        const secret = yield* client.password(view.id)
        if (config.json) return printJson(secret)
        yield* out(secret.password)
      })
    )
  )
).pipe(Command.withDescription("Print a sandbox's code-server password."))

const reconcile = Command.make("reconcile", { json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const report = yield* client.reconcile
        if (config.json) printJson(report)
        else {
          for (const pass of report.passes) {
            for (const change of pass.changes) {
              yield* out(`${pass.pass}: ${change.sandboxId ?? change.containerId ?? "?"}: ${change.action}`)
            }
          }
          const changes = report.passes.reduce((n, pass) => n + pass.changes.length, 0)
          yield* out(changes === 0 ? "nothing to reconcile" : `${changes} change(s)`)
        }
        yield* failIfFailures(report.passes.flatMap((pass) => pass.failures))
      })
    )
  )
).pipe(Command.withDescription("Bring rows and containers back in line with each other (also runs at daemon start)."))

const gc = Command.make("gc", { dryRun: dryRunFlag, yes: yesFlag, json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const planned = yield* client.gc({ execute: false })
        const plan = planned.plan
        const empty = plan.stop.length === 0 && plan.remove.length === 0
        if (!config.json) {
          for (const id of plan.stop) yield* out(`stop    ${id} (idle)`)
          for (const id of plan.remove) yield* out(`remove  ${id} (ended long ago)`)
          if (empty) yield* out("nothing to collect")
        }
        if (config.dryRun || empty) {
          if (config.json) printJson(planned)
          return
        }
        if (!(yield* confirm("stop and remove these sandboxes?", config.yes))) return yield* note("nothing done")
        const report = yield* client.gc({ execute: true, shown: plan })
        if (config.json) printJson(report)
        else yield* out(`stopped ${report.stopped.length}, removed ${report.removed.length}`)
        yield* failIfFailures(report.failures)
      })
    )
  )
).pipe(
  Command.withDescription(
    "Stop idle sandboxes and delete long-stopped ones. Shows the plan; acts (after confirmation, or --yes) only on what is still true."
  )
)

const prune = Command.make("prune", { dryRun: dryRunFlag, yes: yesFlag, json }, (config) =>
  runCommand(
    config,
    connected((client) =>
      Effect.gen(function* () {
        const planned = yield* client.prune({ execute: false })
        const plan = planned.plan
        const empty = plan.containers.length === 0 && plan.directories.length === 0
        if (!config.json) {
          for (const id of plan.containers) yield* out(`container  ${id}`)
          for (const path of plan.directories) yield* out(`directory  ${path}`)
          if (empty) yield* out("nothing to prune")
        }
        if (config.dryRun || empty) {
          if (config.json) printJson(planned)
          return
        }
        if (!(yield* confirm("remove these containers and directories?", config.yes)))
          return yield* note("nothing done")
        const report = yield* client.prune({ execute: true, shown: plan })
        if (config.json) printJson(report)
        else
          yield* out(
            `removed ${report.plan.containers.length} container(s), ${report.plan.directories.length} directorie(s)`
          )
        yield* failIfFailures(report.failures)
      })
    )
  )
).pipe(Command.withDescription("Remove containers and directories of this PRBOX_HOME that no sandbox owns."))

// --- daemon ----------------------------------------------------------------------

const daemonStart = Command.make("start", { json }, (config) =>
  runCommand(
    config,
    withClient(
      home,
      Effect.gen(function* () {
        const { info, started } = yield* ensureDaemon(home, () => {})
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
      home,
      Effect.gen(function* () {
        const client = yield* PrboxClient
        const running = yield* Effect.result(client.version)
        if (running._tag === "Failure") {
          if (running.failure._tag !== "DaemonUnreachable") return yield* Effect.fail(running.failure)
          if (config.json) return printJson({ stopped: false, running: false })
          return yield* out("prboxd is not running")
        }
        yield* stopDaemon(running.success.pid)
        if (config.json) return printJson({ stopped: true, pid: running.success.pid })
        yield* out(`prboxd (pid ${running.success.pid}) stopped`)
      })
    )
  )
).pipe(Command.withDescription("Stop prboxd (SIGTERM) and wait until it has exited."))

const daemonStatus = Command.make("status", { json }, (config) =>
  runCommand(
    config,
    connected((client) =>
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
).pipe(Command.withDescription("Show whether prboxd runs, its version and load."))

const daemonLogs = Command.make(
  "logs",
  {
    lines: Flag.Int("lines").pipe(Flag.withAlias("n"), Flag.withDescription("lines to show"), Flag.withDefault(50)),
    follow: Flag.Boolean("follow").pipe(
      Flag.withAlias("f"),
      Flag.withDescription("keep following"),
      Flag.withDefault(false)
    )
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
      home,
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
    "Check Node, Docker (warns below 28.3.3), git, free disk, state file modes and the daemon socket. Changes nothing."
  )
)

/** Set once `root` exists: the completion script describes the whole command tree. */
let rootCommand: Command.Command.Any | undefined

const completion = Command.make(
  "completion",
  { shell: Argument.Literals("shell", ["bash", "zsh", "fish", "powershell"]) },
  (config) =>
    runCommand(
      { json: false },
      Effect.sync(() => {
        if (rootCommand !== undefined) {
          process.stdout.write(Completions.generate("prbox", config.shell, Completions.fromCommand(rootCommand)))
        }
      })
    )
).pipe(Command.withDescription("Print a shell completion script: prbox completion bash > /etc/bash_completion.d/prbox"))

export const root = Command.make("prbox").pipe(
  Command.withDescription(
    [
      "Pull request sandboxes: each PR in its own Docker container running code-server, managed by prboxd.",
      "",
      "Ids: a unique prefix of a sandbox id, or its pull request URL (owner/repo#N).",
      "State: $PRBOX_HOME (default ~/.prbox). JSON errors (--json) go to stdout.",
      "",
      ...exitCodesHelp.split("\n")
    ].join("\n  ")
  ),
  Command.withSubcommands([
    open,
    ls,
    status,
    stop,
    restart,
    rm,
    logs,
    exec,
    password,
    reconcile,
    gc,
    prune,
    daemon,
    doctorCommand,
    completion
  ])
)

rootCommand = root
