import { spawn } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join, resolve } from "node:path"
import { statePaths } from "@prbox/domain"
import { Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { ensureRunning, home, withClient } from "./Connect.ts"
import { CliFailure, runCommand, usageError } from "./Exit.ts"
import { idArgument, json, needsDaemon, note, out, resolveId } from "./Params.ts"
import { type SshConfigInput, sandboxOfHost, sshConfigBlock, sshOptions, withInclude } from "./SshConfig.ts"
import { type ProxyEnd, proxy } from "./SshProxy.ts"

/** `prbox ssh`, `prbox ssh-config`, `prbox ssh-proxy`: OpenSSH into a sandbox over prboxd's socket. */

const configInput = (): SshConfigInput => ({
  command: [process.execPath, resolve(process.argv[1] ?? "prbox")],
  home: home.home,
  knownHosts: statePaths(home.home).ssh.knownHosts
})

const hostFailure = (message: string) => new CliFailure({ tag: "HostFailure", message, code: 1 })

/** Writes prbox's `Host *.prbox` file (0600 in a 0700 folder) and returns its path. */
const writeConfig = Effect.try({
  try: () => {
    const paths = statePaths(home.home).ssh
    mkdirSync(paths.folder, { recursive: true, mode: 0o700 })
    writeFileSync(paths.config, sshConfigBlock(configInput()), { mode: 0o600 })
    chmodSync(paths.config, 0o600)
    return paths.config
  },
  catch: (error) => hostFailure(`cannot write prbox's ssh config: ${String(error)}`)
})

/** Adds `Include <prbox's file>` at the top of ~/.ssh/config once, after a backup; says what it did. */
const install = (file: string) =>
  Effect.try({
    try: () => {
      const folder = join(homedir(), ".ssh")
      const config = join(folder, "config")
      mkdirSync(folder, { recursive: true, mode: 0o700 })
      const current = existsSync(config) ? readFileSync(config, "utf8") : ""
      const next = withInclude(current, file)
      if (next === undefined) return `${config} already includes ${file}`
      let backup = ""
      if (existsSync(config)) {
        backup = `${config}.prbox-backup`
        copyFileSync(config, backup)
      }
      writeFileSync(config, next, { mode: 0o600 })
      return `added "Include ${file}" at the top of ${config}${backup === "" ? "" : ` (the previous one is ${backup})`}`
    },
    catch: (error) => hostFailure(`cannot change ~/.ssh/config: ${String(error)}`)
  })

const sshConfig = Command.make(
  "ssh-config",
  {
    install: Flag.Boolean("install").pipe(
      Flag.withDescription(
        "add `Include <prbox's file>` at the top of ~/.ssh/config (once; the old file is kept as a backup)"
      ),
      Flag.withDefault(false)
    )
  },
  (config) =>
    runCommand(
      { json: false },
      Effect.gen(function* () {
        const file = yield* writeConfig
        if (config.install) yield* note(yield* install(file))
        yield* out(sshConfigBlock(configInput()).trimEnd())
      })
    )
).pipe(
  Command.withDescription(
    "Print the OpenSSH `Host *.prbox` entry (also kept in $PRBOX_HOME/ssh/config): `ssh <id>.prbox` then reaches a running sandbox through prboxd, with its host key pinned in prbox's known_hosts."
  )
)

const sshProxy = Command.make(
  "ssh-proxy",
  { host: Argument.String("host").pipe(Argument.withDescription("<sandbox id>.prbox (OpenSSH's %h)")) },
  (config) =>
    runCommand(
      { json: false },
      Effect.gen(function* () {
        const id = sandboxOfHost(config.host)
        if (id === undefined) return yield* usageError(`${config.host} is not <sandbox id>.prbox`)
        yield* withClient(ensureRunning(() => undefined))
        const ended = yield* Effect.callback<ProxyEnd>((resume) => {
          void proxy(home, id).then((end) => resume(Effect.succeed(end)))
        })
        if (ended._tag !== "Ended") return yield* new CliFailure({ tag: "SshRefused", message: ended.message, code: 1 })
      })
    )
).pipe(Command.withDescription("OpenSSH's ProxyCommand for <id>.prbox (see `prbox ssh-config`); not run by hand."))

const ssh = Command.make(
  "ssh",
  {
    id: idArgument,
    command: Argument.String("command").pipe(
      Argument.withDescription("a command to run instead of a shell, after --"),
      Argument.variadic()
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const options = sshOptions(configInput()).flatMap(([key, value]) => ["-o", `${key}=${value}`])
      const code = yield* Effect.callback<number, CliFailure>((resume) => {
        const child = spawn("ssh", [...options, `${view.id}.prbox`, ...config.command], { stdio: "inherit" })
        child.on("error", (error) =>
          resume(Effect.fail(hostFailure(`cannot run ssh (openssh-client): ${error.message}`)))
        )
        child.on("exit", (exitCode, signal) => resume(Effect.succeed(exitCode ?? (signal === null ? 1 : 128))))
      })
      if (code !== 0) process.exitCode = code
    })
  )
).pipe(
  Command.withDescription(
    "Open a shell in a running sandbox (or run `-- command`) with the system's ssh, through prboxd's socket: no port is opened."
  )
)

export const sshCommands = [ssh, sshConfig, sshProxy] as const
