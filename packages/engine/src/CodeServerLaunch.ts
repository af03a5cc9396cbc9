/**
 * How prbox's code-server is started in a sandbox's container: its command,
 * after a probe of the user's environment (`userEnvProbe`), and beside the
 * image's own ENTRYPOINT/CMD when `overrideCommand` is false. Pure: strings
 * and argv only.
 */
import type { EnvironmentPlan } from "@prbox/domain"
import { PROBE_COMMANDS, PROBE_FLAGS, PROBE_SCRIPT } from "./UserEnvProbe.ts"

/**
 * Run by the sandbox's own Node (`node -e`) before code-server: the user's
 * environment probed as UserEnvProbe.ts says (the same script; its parse and
 * `mergePaths` written again in JavaScript, since no TypeScript reaches the
 * container: test/UserEnvLauncher.test.ts holds the two to one table), set on this process
 * but for the variables named in argv[2], then code-server's entry loaded
 * in this process (no extra Node: code-server forks its own server with
 * `execArgv`, so ours is cleared first). A probe that fails or times out
 * is a line on stderr, never a failure: code-server starts all the same.
 * argv: flag, timeout (seconds), kept variables (comma-separated), probe
 * script, entry, code-server's args.
 */
export const LAUNCHER = `"use strict"
const cp = require("child_process")
const [flag, timeout, keptList, script, entry, ...args] = process.argv.slice(1)
const kept = new Set(keptList.split(",").filter((key) => key !== ""))
const mergePaths = (shellPath, containerPath, root) => {
  const result = shellPath.split(":")
  let insertAt = 0
  for (const entry of containerPath.split(":")) {
    const at = result.indexOf(entry)
    if (at === -1) {
      if (root || !/\\/sbin(\\/|$)/.test(entry)) result.splice(insertAt++, 0, entry)
    } else insertAt = at + 1
  }
  return result.join(":")
}
const probe = (command, separator) =>
  new Promise((resolve) => {
    const mark = require("crypto").randomUUID()
    let out = ""
    const child = cp.spawn("/bin/sh", ["-c", script, "prbox-probe", flag, mark, command], {
      stdio: ["ignore", "pipe", "ignore"],
      detached: true
    })
    const timer = setTimeout(() => {
      try { process.kill(-child.pid, "SIGKILL") } catch {}
      resolve(null)
    }, Number(timeout) * 1000)
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk) => { if (out.length < 16777216) out += chunk })
    child.on("error", () => { clearTimeout(timer); resolve(undefined) })
    child.on("close", () => {
      clearTimeout(timer)
      const start = out.indexOf(mark)
      const end = start < 0 ? -1 : out.indexOf(mark, start + mark.length)
      if (end < 0 || end === start + mark.length) return resolve(undefined)
      const env = {}
      for (const item of out.slice(start + mark.length, end).split(separator)) {
        const at = item.indexOf("=")
        if (at > 0) env[item.slice(0, at)] = item.slice(at + 1)
      }
      resolve(env)
    })
  })
const start = async () => {
  let env = await probe(${JSON.stringify(PROBE_COMMANDS[0].command)}, "\\0")
  if (env === undefined) env = await probe(${JSON.stringify(PROBE_COMMANDS[1].command)}, "\\n")
  if (env) {
    delete env.PWD
    if (env.PATH !== undefined && process.env.PATH !== undefined)
      env.PATH = mergePaths(env.PATH, process.env.PATH, process.getuid() === 0)
    for (const [key, value] of Object.entries(env)) if (!kept.has(key)) process.env[key] = value
  } else {
    console.error(env === null
      ? "prbox: userEnvProbe: the user's shell did not finish within " + timeout + " s; code-server starts without its environment"
      : "prbox: userEnvProbe: the user's shell gave no environment; code-server starts without it")
  }
  process.argv = [process.execPath, entry, ...args]
  process.execArgv = []
  require(entry)
}
start()
`

/** One word for `sh -c`, whatever it holds. */
export const shellQuote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`

/**
 * code-server's command before its arguments: `command` (prbox's Node and
 * code-server's entry), through the launcher when the plan probes the
 * user's environment (for at most `timeoutSeconds`); `kept` are the
 * variables the probe must not change.
 */
export const codeServerArgv = (
  command: readonly [node: string, entry: string],
  plan: EnvironmentPlan,
  kept: ReadonlyArray<string>,
  timeoutSeconds: number
): ReadonlyArray<string> => {
  const [node, entry] = command
  if (plan.userEnvProbe === undefined) return [node, entry]
  const flag = PROBE_FLAGS[plan.userEnvProbe]
  return [node, "-e", LAUNCHER, "--", flag, String(timeoutSeconds), kept.join(","), PROBE_SCRIPT, entry]
}

/**
 * Features' entrypoints (the image's merged metadata's, in order) before the
 * container's main process, as the devcontainers CLI chains them
 * (`spawnDevContainer`: `/bin/sh -c` with each entrypoint a line, then
 * `exec "$@"`): each runs at every start of the container, before code-server
 * (and so before the lifecycle steps, which wait for it). A feature's
 * entrypoint is the feature's code: the same trust as its install.sh.
 */
export const entrypointsThen = (entrypoints: ReadonlyArray<string>): string =>
  [`trap "exit 0" 15`, ...entrypoints, `exec "$@"`].join("\n")

/**
 * `overrideCommand: false`: the container's entrypoint is /bin/sh running
 * this with the image's ENTRYPOINT and CMD as its arguments (features'
 * entrypoints first). code-server
 * starts in the background, then the image's command replaces the shell as
 * the container's main process; with none, the shell stays, as the CLI's
 * (`spawnDevContainer`, src/spec-node/singleContainer.ts) does.
 */
export const besideImageCommand = (
  codeServer: ReadonlyArray<string>,
  entrypoints: ReadonlyArray<string> = []
): string =>
  [
    ...entrypoints,
    `${codeServer.map(shellQuote).join(" ")} &`,
    `trap "exit 0" 15`,
    `exec "$@"`,
    "while sleep 1 & wait $!; do :; done"
  ].join("\n")
