import { homedir } from "node:os"
import { join } from "node:path"

/** Where prbox keeps its state: `$PRBOX_HOME`, else `~/.prbox` (the engine's rule). */
export const prboxHome = (env: NodeJS.ProcessEnv = process.env): string => env.PRBOX_HOME ?? join(homedir(), ".prbox")

/** `$PRBOX_HOME/run` (0700): the daemon's socket and lock. */
export const runDir = (home: string): string => join(home, "run")
export const socketPath = (home: string): string => join(runDir(home), "prboxd.sock")
export const lockPath = (home: string): string => join(runDir(home), "prboxd.lock")
/** `$PRBOX_HOME/logs` (0700): the daemon's rotating log. */
export const logDir = (home: string): string => join(home, "logs")
export const daemonLogPath = (home: string): string => join(logDir(home), "prboxd.log")
