import { homedir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import { Paths } from "./Protocol.ts"

/** Where the daemon is and how to run the CLI, after defaults. */
export interface Settings {
  readonly home: string
  readonly socketPath: string
  readonly cliPath: string
}

/** The `prbox.*` settings as the user wrote them; empty means "the default". */
export interface RawSettings {
  readonly home?: string | undefined
  readonly socketPath?: string | undefined
  readonly cliPath?: string | undefined
}

const given = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed === "" ? undefined : trimmed
}

/** `~/x` is the user's home, like a shell would read it. */
export const expandHome = (path: string): string =>
  path === "~" ? homedir() : path.startsWith("~/") ? join(homedir(), path.slice(2)) : path

/**
 * PRBOX_HOME falls back to the environment and then `~/.prbox` (the CLI's
 * rule), the socket to `<home>/run/prboxd.sock`, the CLI to `prbox` on PATH.
 */
export const resolveSettings = (raw: RawSettings, env: NodeJS.ProcessEnv = process.env): Settings => {
  const configured = given(raw.home)
  const home = configured === undefined ? Paths.prboxHome(env) : resolve(expandHome(configured))
  const socket = given(raw.socketPath)
  const cli = given(raw.cliPath)
  return {
    home,
    socketPath: socket === undefined ? Paths.socketPath(home) : resolve(expandHome(socket)),
    cliPath: cli === undefined ? "prbox" : isAbsolute(expandHome(cli)) ? expandHome(cli) : cli
  }
}
