import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Paths } from "@prbox/protocol"
import { Cause, Effect, Exit } from "effect"
import { run } from "./Daemon.ts"
import { privateDirectory } from "./Files.ts"
import { DAEMON_VERSION } from "./Handlers.ts"
import { limitsFromEnv } from "./Limits.ts"
import * as Log from "./Log.ts"

const usage = `prboxd ${DAEMON_VERSION}: the prbox daemon (one per PRBOX_HOME)

Usage: prboxd [--foreground]

  --foreground   also log to stderr (the log file is always written)
  --help         this text
  --version      the daemon's version

State: $PRBOX_HOME (default ~/.prbox). Socket: $PRBOX_HOME/run/prboxd.sock.
Log: $PRBOX_HOME/logs/prboxd.log (rotated by size).
Exit codes: 0 stopped by SIGTERM/SIGINT, 1 could not start, 2 usage.
Tuning: PRBOXD_MAX_BODY_BYTES, PRBOXD_REQUEST_TIMEOUT_MS, PRBOXD_HEADERS_TIMEOUT_MS,
PRBOXD_MAX_REQUESTS, PRBOXD_MAX_STREAMS.
`

const args = process.argv.slice(2)
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(usage)
  process.exit(0)
}
if (args.includes("--version")) {
  process.stdout.write(`${DAEMON_VERSION}\n`)
  process.exit(0)
}
const unknown = args.filter((arg) => arg !== "--foreground")
if (unknown.length > 0) {
  process.stderr.write(`prboxd: unknown argument ${unknown[0]}\n${usage}`)
  process.exit(2)
}
const foreground = args.includes("--foreground")

const fail = (message: string): never => {
  process.stderr.write(`prboxd: ${message}\n`)
  process.exit(1)
}

const home = Paths.prboxHome()
let file: Log.RotatingFile | undefined
try {
  privateDirectory(home)
  privateDirectory(Paths.logDir(home))
  privateDirectory(Paths.runDir(home))
  file = new Log.RotatingFile(Paths.daemonLogPath(home))
} catch (cause) {
  fail(cause instanceof Error ? cause.message : String(cause))
}
let limits: ReturnType<typeof limitsFromEnv> | undefined
try {
  limits = limitsFromEnv()
} catch (cause) {
  fail(cause instanceof Error ? cause.message : String(cause))
}

if (file !== undefined && limits !== undefined) {
  const logFile = file
  const program = run({ home, limits }).pipe(
    Effect.catch((error) =>
      Effect.gen(function* () {
        yield* Effect.logError(`cannot start: ${error.message}`)
        // Not only in the log: whoever started the daemon sees why on stderr.
        if (!foreground) process.stderr.write(`prboxd: ${error.message}\n`)
        process.exitCode = 1
      })
    ),
    Effect.provide(Log.layer(logFile, { stderr: foreground }))
  )
  NodeRuntime.runMain(program, {
    disableErrorReporting: true,
    // Stopped by SIGTERM/SIGINT is a clean stop: exit 0 (a failed start set exitCode 1 above).
    teardown: (exit, onExit) =>
      onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? (process.exitCode === 1 ? 1 : 0) : 1)
  })
}
