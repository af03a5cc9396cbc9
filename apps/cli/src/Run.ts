import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { CLI_VERSION, root } from "./Commands.ts"
import { ExitCode } from "./Exit.ts"

/**
 * prbox. Command failures are rendered by each command (one line, an exit
 * code); what reaches here is a usage error effect/cli already printed.
 */
const program = Command.run(root, { version: CLI_VERSION }).pipe(
  Effect.catch(() =>
    Effect.sync(() => {
      process.exitCode = ExitCode.usage
    })
  ),
  Effect.catchDefect((defect) =>
    Effect.sync(() => {
      process.stderr.write(`prbox: internal error: ${defect instanceof Error ? defect.message : String(defect)}\n`)
      process.exitCode = ExitCode.other
    })
  ),
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(program, { disableErrorReporting: true })
