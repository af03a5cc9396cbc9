import { homedir } from "node:os"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { resolveHome, statePaths } from "@prbox/domain"
import { Cause, Effect, Exit } from "effect"
import { Command, Flag } from "effect/cli"
import { run } from "./Daemon.ts"
import { privateDirectory } from "./Files.ts"
import { DAEMON_VERSION } from "./Handlers.ts"
import { describeLimitsError, limitsConfig } from "./Limits.ts"
import * as Log from "./Log.ts"
import { REQUEST_TIMINGS_ENV } from "./RequestTimings.ts"

/** Exit codes: 0 stopped by SIGTERM/SIGINT, 1 could not start, 2 usage. */
const EXIT_CANNOT_START = 1
const EXIT_USAGE = 2

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** Says why on stderr (whoever started the daemon reads it there, or in the log the launcher pointed stderr at). */
const cannotStart = (message: string) =>
  Effect.sync(() => {
    process.stderr.write(`prboxd: ${message}\n`)
    process.exitCode = EXIT_CANNOT_START
  })

const serve = (foreground: boolean) =>
  Effect.gen(function* () {
    const home = resolveHome(process.env, homedir())
    const paths = statePaths(home)
    const file = yield* Effect.try({
      try: () => {
        privateDirectory(home)
        privateDirectory(paths.logs)
        privateDirectory(paths.run)
        return new Log.RotatingFile(paths.daemonLog)
      },
      catch: messageOf
    })
    const limits = yield* limitsConfig.pipe(Effect.mapError((error) => describeLimitsError(error)))
    const timingsFile = process.env[REQUEST_TIMINGS_ENV]
    yield* run({ home, limits, ...(timingsFile === undefined || timingsFile === "" ? {} : { timingsFile }) }).pipe(
      Effect.catch((error) =>
        Effect.gen(function* () {
          yield* Effect.logError(`cannot start: ${error.message}`)
          // Not only in the log: whoever started the daemon sees why on stderr.
          if (!foreground) process.stderr.write(`prboxd: ${error.message}\n`)
          process.exitCode = EXIT_CANNOT_START
        })
      ),
      Effect.provide(Log.layer(file, { stderr: foreground }))
    )
  }).pipe(Effect.catch(cannotStart))

const prboxd = Command.make(
  "prboxd",
  {
    foreground: Flag.Boolean("foreground").pipe(
      Flag.withDescription("also log to stderr (the log file is always written)"),
      Flag.withDefault(false)
    )
  },
  (config) => serve(config.foreground)
).pipe(
  Command.withDescription(
    [
      "The prbox daemon (one per PRBOX_HOME).",
      "",
      "State: $PRBOX_HOME (default ~/.prbox). Socket: $PRBOX_HOME/run/prboxd.sock.",
      "Log: $PRBOX_HOME/logs/prboxd.log (rotated by size).",
      "Exit codes: 0 stopped by SIGTERM/SIGINT, 1 could not start, 2 usage.",
      "Tuning: PRBOXD_MAX_BODY_BYTES, PRBOXD_REQUEST_TIMEOUT_MS, PRBOXD_HEADERS_TIMEOUT_MS,",
      "PRBOXD_MAX_REQUESTS, PRBOXD_MAX_STREAMS, PRBOXD_PREVIEW_MAX_CONNECTIONS,",
      "PRBOXD_PREVIEW_MAX_PER_SANDBOX, PRBOXD_PREVIEW_IDLE_TIMEOUT_MS (positive integers)."
    ].join("\n  ")
  )
)

// A usage error reaches here after effect/cli printed it.
const program = Command.run(prboxd, { version: DAEMON_VERSION }).pipe(
  Effect.catch(() =>
    Effect.sync(() => {
      process.exitCode = EXIT_USAGE
    })
  ),
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  // Stopped by SIGTERM/SIGINT is a clean stop: exit 0, or the code a failed start or a usage error set.
  teardown: (exit, onExit) =>
    onExit(
      Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)
        ? typeof process.exitCode === "number"
          ? process.exitCode
          : 0
        : EXIT_CANNOT_START
    )
})
