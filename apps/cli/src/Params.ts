import { createInterface } from "node:readline/promises"
import { type ClientError, normalizeOpenInput, type PrboxClientShape } from "@prbox/client"
import { terminalSafe } from "@prbox/domain"
import type { SandboxView } from "@prbox/protocol"
import { Effect, Option } from "effect"
import { Argument, Flag } from "effect/cli"
import { connected } from "./Connect.ts"
import { type Output, runCommand, usageError } from "./Exit.ts"

/** Flags, arguments and small helpers every command group shares. */

export const json = Flag.Boolean("json").pipe(
  Flag.withDescription('print JSON on stdout; a failure prints {"error":{"tag","message"}}'),
  Flag.withDefault(false)
)
export const idArgument = Argument.String("id").pipe(
  Argument.withDescription("a sandbox id (a unique prefix is enough) or its pull request URL / owner/repo#N")
)
export const prFlag = Flag.Int("pr").pipe(
  Flag.withDescription("the pull request number, for a plain git URL or path"),
  Flag.optional
)
export const waitFlag = Flag.Boolean("wait").pipe(
  Flag.withDescription("follow progress until the sandbox runs (--no-wait: return once accepted)"),
  Flag.withDefault(true)
)
export const yesFlag = Flag.Boolean("yes").pipe(
  Flag.withAlias("y"),
  Flag.withDescription("act without asking for confirmation"),
  Flag.withDefault(false)
)
export const dryRunFlag = Flag.Boolean("dry-run").pipe(
  Flag.withDescription("only show what would be done"),
  Flag.withDefault(false)
)
export const followFlag = (description: string) =>
  Flag.Boolean("follow").pipe(Flag.withAlias("f"), Flag.withDescription(description), Flag.withDefault(false))

/** A line for the reader (what the sandbox wrote in it made safe: domain terminalSafe). */
export const out = (text: string) => Effect.sync(() => process.stdout.write(`${terminalSafe(text)}\n`))
export const note = (text: string) => Effect.sync(() => process.stderr.write(`prbox: ${terminalSafe(text)}\n`))

export const optionalNumber = (value: Option.Option<number>) => Option.getOrUndefined(value)

/** The sandbox an id argument names: an id prefix, a PR reference, or a local path (sent absolute). */
export const resolveId = (
  client: PrboxClientShape,
  input: string,
  pr?: number
): Effect.Effect<SandboxView, ClientError> => client.resolve(normalizeOpenInput(input, process.cwd()), pr)

export const isTty = (json: boolean) => !json && process.stderr.isTTY === true

/** Asks on the terminal; without one, refuses rather than act unasked. */
export const confirm = (question: string, yes: boolean) =>
  Effect.gen(function* () {
    if (yes) return true
    if (process.stdin.isTTY !== true) {
      return yield* usageError("refusing to act without confirmation: pass --yes (or --dry-run to only look)")
    }
    // A terminal that closes before it answers is a "no".
    const answer = yield* Effect.tryPromise(async () => {
      const rl = createInterface({ input: process.stdin, output: process.stderr })
      try {
        return await rl.question(`${question} [y/N] `)
      } finally {
        rl.close()
      }
    }).pipe(Effect.orElseSucceed(() => ""))
    return /^y(es)?$/i.test(answer.trim())
  })

/**
 * A command's handler that needs the daemon: it gets a client (the daemon is
 * started first when it is not running), and every failure becomes one line
 * (or a JSON error) and an exit code.
 */
export const needsDaemon =
  <C extends Output, E>(body: (client: PrboxClientShape, config: C) => Effect.Effect<void, E>) =>
  (config: C) =>
    runCommand(
      config,
      connected((client) => body(client, config))
    )
