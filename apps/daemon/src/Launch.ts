import { homedir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** The daemon's entry point, `apps/daemon/src/main.ts`. */
export const DAEMON_MAIN = fileURLToPath(new URL("./main.ts", import.meta.url))

/**
 * Node flags prboxd runs with (apps/daemon/bin/prboxd spells the same list).
 * V8 sizes the young generation for throughput by default and never gives
 * it back: a 64 MiB semi-space pair is half of an idle daemon's memory. The
 * daemon's allocations are small and short-lived, so 1 MiB semi-spaces cost
 * it nothing measurable in latency.
 */
export const DAEMON_NODE_FLAGS: ReadonlyArray<string> = ["--max-semi-space-size=1"]

/** Set by the launcher when it chose NODE_COMPILE_CACHE itself; main.ts then drops both. */
export const LAUNCHER_COMPILE_CACHE = "PRBOXD_LAUNCHER_COMPILE_CACHE"

/**
 * The environment prboxd starts with: `env`, plus Node's compile cache from
 * the first module on (the directory `module.enableCompileCache()` uses).
 * Enabled only in main.ts, the cache would come too late for main.ts itself,
 * and Node would load its TypeScript stripper (~18 MiB) for that one file.
 */
export const daemonEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  env.NODE_COMPILE_CACHE !== undefined && env.NODE_COMPILE_CACHE !== ""
    ? env
    : {
        ...env,
        // Inside the private state directory: a shared temp dir would let another user plant compiled code.
        NODE_COMPILE_CACHE: join(env.PRBOX_HOME ?? join(homedir(), ".prbox"), "cache", "node-compile"),
        [LAUNCHER_COMPILE_CACHE]: "1"
      }

/** `node <flags> apps/daemon/src/main.ts <args>`, for `spawn(process.execPath, ...)`. */
export const daemonArgs = (args: ReadonlyArray<string> = []): Array<string> => [
  ...DAEMON_NODE_FLAGS,
  DAEMON_MAIN,
  ...args
]
