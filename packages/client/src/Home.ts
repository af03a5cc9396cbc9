import { homedir } from "node:os"
// The module, not the index: the CLI's fast path reads the home without loading effect.
import { resolveHome, statePaths } from "@prbox/domain/StatePaths"

/** What a client needs to know about one `$PRBOX_HOME`: where its daemon listens and logs. */
export interface ClientHome {
  readonly home: string
  readonly socketPath: string
  readonly logPath: string
}

/** The home at `home`, with the socket somewhere else when the user configured one. */
export const clientHome = (home: string, socketPath?: string): ClientHome => {
  const paths = statePaths(home)
  return { home, socketPath: socketPath ?? paths.socket, logPath: paths.daemonLog }
}

/** `$PRBOX_HOME`, else `~/.prbox` (the rule of the daemon and the engine). */
export const currentHome = (env: NodeJS.ProcessEnv = process.env): ClientHome => clientHome(resolveHome(env, homedir()))
