import { isAbsolute, resolve } from "node:path"
import { clientHome, currentHome, expandHome } from "@prbox/client"

export { expandHome }

/** Where the daemon is and how to run the CLI, after defaults. */
export interface Settings {
  readonly home: string
  readonly socketPath: string
  readonly cliPath: string
  /** The `prboxd` executable Start Daemon runs; unset: `prboxd` on PATH. */
  readonly daemonPath: string | undefined
}

/** The `prbox.*` settings as the user wrote them; empty means "the default". */
export interface RawSettings {
  readonly home?: string | undefined
  readonly socketPath?: string | undefined
  readonly cliPath?: string | undefined
  readonly daemonPath?: string | undefined
}

const given = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

/**
 * PRBOX_HOME falls back to the environment and then `~/.prbox` (the CLI's
 * rule), the socket to `<home>/run/prboxd.sock`, the CLI to `prbox` on PATH
 * (the daemon to `prboxd` on PATH, when Start Daemon runs it).
 */
export const resolveSettings = (raw: RawSettings, env: NodeJS.ProcessEnv = process.env): Settings => {
  const configured = given(raw.home)
  const home = configured === undefined ? currentHome(env).home : resolve(expandHome(configured))
  const socket = given(raw.socketPath)
  const command = (value: string | undefined) =>
    value === undefined ? undefined : isAbsolute(expandHome(value)) ? expandHome(value) : value
  return {
    home,
    socketPath: socket === undefined ? clientHome(home).socketPath : resolve(expandHome(socket)),
    cliPath: command(given(raw.cliPath)) ?? "prbox",
    daemonPath: command(given(raw.daemonPath))
  }
}
