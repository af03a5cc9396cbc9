import { PRBOX_VERSION } from "@prbox/domain"
import { Effect } from "effect"
import { Argument, Command, Completions } from "effect/cli"
import { daemonCommands } from "./DaemonCommands.ts"
import { execLogsCommands } from "./ExecLogs.ts"
import { exitCodesHelp, runCommand } from "./Exit.ts"
import { filesCommands } from "./FilesCommands.ts"
import { imageCommand } from "./ImageCommands.ts"
import { jobCommands } from "./JobCommands.ts"
import { maintenanceCommands } from "./Maintenance.ts"
import { mcpCommand } from "./McpCommand.ts"
import { portsCommands } from "./PortsCommands.ts"
import { prebuildCommand } from "./PrebuildCommand.ts"
import { pushCommand } from "./PushCommand.ts"
import { passwordCommand, rebuildCommand, sandboxCommands } from "./SandboxCommands.ts"
import { sshCommands } from "./SshCommands.ts"
import { updateCommand } from "./UpdateCommand.ts"

export const CLI_VERSION = PRBOX_VERSION

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

/** The command table: every command of `prbox`, in the order `--help` lists them. */
export const root = Command.make("prbox").pipe(
  Command.withDescription(
    [
      "Pull request sandboxes: each PR in its own Docker container running code-server, managed by prboxd.",
      "",
      "Ids: a unique prefix of a sandbox id, or its pull request URL (owner/repo#N).",
      "State: $PRBOX_HOME (default ~/.prbox). JSON errors (--json) go to stdout.",
      "Every command that needs prboxd starts it when it is not running.",
      "",
      ...exitCodesHelp.split("\n")
    ].join("\n  ")
  ),
  Command.withSubcommands([
    ...sandboxCommands,
    updateCommand,
    pushCommand,
    rebuildCommand,
    ...execLogsCommands,
    ...filesCommands,
    ...jobCommands,
    passwordCommand,
    ...portsCommands,
    ...sshCommands,
    ...maintenanceCommands,
    prebuildCommand,
    ...daemonCommands,
    imageCommand,
    mcpCommand(CLI_VERSION),
    completion
  ])
)

rootCommand = root
