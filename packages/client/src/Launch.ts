import { homedir } from "node:os"
import { resolveHome, STARTUP_TIERING_FLAGS, statePaths } from "@prbox/domain"

/**
 * Node flags prboxd runs with (apps/daemon/bin/prboxd and the package's
 * bin/prboxd.cjs spell the same list; apps/daemon/test/Tiering.test.ts checks).
 * V8 sizes the young generation for throughput by default and never gives
 * it back: a 64 MiB semi-space pair is half of an idle daemon's memory. The
 * daemon's allocations are small and short-lived, so 1 MiB semi-spaces cost
 * it nothing measurable in latency.
 * Each request leaves a little in the old generation (~20 KiB a scavenge, a
 * scavenge every ~40 lists), which V8 lets grow to up to 4x the live heap
 * before a full collection when collecting is cheap: ~76 MiB over the
 * daemon's ~19 MiB, +55 MiB of RSS after ~50,000 requests. Growing it by 30%
 * (V8's own factor when it saves memory; at least 8 MiB) holds it to ~30 MiB,
 * for a full collection every few seconds at thousands of requests a second.
 * Start-up code stays unoptimized (domain DaemonTiering.ts) until the daemon serves.
 */
export const DAEMON_NODE_FLAGS: ReadonlyArray<string> = [
  "--max-semi-space-size=1",
  "--heap-growing-percent=30",
  ...STARTUP_TIERING_FLAGS
]

/** Set by the launcher when it chose NODE_COMPILE_CACHE itself; the daemon's main.ts then drops both. */
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
        NODE_COMPILE_CACHE: statePaths(resolveHome(env, homedir())).compileCache,
        [LAUNCHER_COMPILE_CACHE]: "1"
      }

/** `<flags> <entry> <args>`, for `spawn(process.execPath, ...)`. */
export const daemonArgs = (entry: string, args: ReadonlyArray<string> = []): Array<string> => [
  ...DAEMON_NODE_FLAGS,
  entry,
  ...args
]

/**
 * How to start prboxd: a program and its arguments. The CLI runs the daemon's
 * entry module with its own Node (`node`); the VS Code extension, whose Node
 * is the editor's, runs the `prboxd` executable, which finds its own Node
 * (`executable`).
 */
export interface DaemonLauncher {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** The daemon's entry module (the `@prbox/daemon/main` export) run by this process's Node, with the daemon's flags. */
export const node = (entry: string): DaemonLauncher => ({ command: process.execPath, args: daemonArgs(entry) })

/** The `prboxd` executable (apps/daemon/bin/prboxd, or a link to it): it sets the flags itself. */
export const executable = (path: string): DaemonLauncher => ({ command: path, args: [] })
