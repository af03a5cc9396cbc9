import { ExitCode as ApiExitCode, exitCodeOf } from "@prbox/protocol"
import { Cause, Effect, Schema } from "effect"
import { type Output, printFailure, type Reported } from "./PrintFailure.ts"

export type { Output }

/** The CLI's exit codes (the protocol's table); `prbox --help` lists them. */
export const ExitCode = {
  ...ApiExitCode,
  /** `prbox exec`: the command did not finish within --timeout. */
  execTimeout: 124
} as const

export const exitCodesHelp = `Exit codes:
  0  success (for open: the sandbox is running)
  1  other failure (the sandbox failed, gc/prune actions failed, internal error)
  2  usage or bad input (unknown flag, malformed PR reference, invalid request)
  3  not found, or an ambiguous id prefix
  4  conflict (stopping, fenced, retired, not running, refused without --force)
  5  daemon not reachable (or too old/new for this client)
  6  Docker unavailable
  7  invalid config ($PRBOX_HOME/config.json)
  8  daemon busy (retry)
  exec exits with the command's own exit code, 124 when it timed out.`

/** A failure of the CLI itself (bad usage it detects, a daemon that would not start, ...). */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  tag: Schema.String,
  message: Schema.String,
  code: Schema.Number
}) {}

export const usageError = (message: string) => new CliFailure({ tag: "Usage", message, code: ExitCode.usage })

/** The client's own failures; an API error's code comes from the protocol's table. */
const codeOfTag = (tag: string): number => {
  switch (tag) {
    case "Usage":
      return ExitCode.usage
    case "DaemonUnreachable":
    case "DaemonStopped":
    case "IncompatibleDaemon":
      return ExitCode.daemonUnreachable
    default:
      return exitCodeOf(tag)
  }
}

export const report = (error: unknown): Reported => {
  if (error instanceof CliFailure) return { tag: error.tag, message: error.message, code: error.code }
  if (typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string") {
    const message =
      "message" in error && typeof error.message === "string" && error.message.length > 0 ? error.message : error._tag
    const files =
      "changedFiles" in error && Array.isArray(error.changedFiles) ? { changedFiles: error.changedFiles } : {}
    return { tag: error._tag, message, code: codeOfTag(error._tag), ...files }
  }
  return { tag: "Internal", message: error instanceof Error ? error.message : String(error), code: ExitCode.other }
}

/**
 * Runs a command's body: every failure, and every defect, becomes one line
 * (never a stack trace) and an exit code. Interruption (Ctrl-C) passes.
 */
export const runCommand = <E, R>(output: Output, body: Effect.Effect<void, E, R>): Effect.Effect<void, never, R> =>
  body.pipe(
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      const failure = cause.reasons.find((reason) => reason._tag === "Fail")
      if (failure !== undefined) return Effect.sync(() => printFailure(output, report(failure.error)))
      const defect = cause.reasons.find((reason) => reason._tag === "Die")
      return Effect.sync(() =>
        printFailure(output, {
          tag: "Internal",
          message: `internal error: ${defect === undefined ? "unknown" : report(defect.defect).message}`,
          code: ExitCode.other
        })
      )
    })
  )

export const printJson = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}
