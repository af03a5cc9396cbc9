import { type ChildProcessByStdio, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import { PullRequestNumber, SandboxId } from "@prbox/domain"
import { SandboxRepo, layer as sqliteRepo } from "@prbox/store"
import { Effect, Redacted, Schema } from "effect"
import { removeHome, until } from "../../daemon/test/support.ts"

export {
  call,
  containersOfHome,
  makeHome,
  removeHome,
  socketOf,
  until,
  writeConfig
} from "../../daemon/test/support.ts"

/** Parses a `--json` output as the protocol schema it claims to be. */
export const decode = <S extends Schema.Top>(schema: S, text: string): S["Type"] =>
  Schema.decodeUnknownSync(schema as unknown as Schema.Codec<S["Type"], unknown>)(JSON.parse(text))

export const CLI_MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url))
/** The full CLI alone (effect/cli's command table), without main.ts's fast path. */
export const FULL_CLI = fileURLToPath(new URL("../src/Run.ts", import.meta.url))

/** Reports on stderr when Run.ts (the full CLI) is loaded: an answer without it came from the fast path. */
export const FULL_CLI_PROBE = `--import=data:text/javascript,${encodeURIComponent(
  'import { registerHooks } from "node:module"; registerHooks({ load: (url, context, next) => { if (url.endsWith("/src/Run.ts")) process.stderr.write("full CLI loaded\\n"); return next(url, context) } })'
)}`

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Another user to run the CLI as, with a Node binary that user can execute. */
export interface RunAs {
  readonly uid: number
  readonly gid: number
  readonly node: string
  /**
   * Its supplementary groups (as `setpriv --groups` sets them: Node's own
   * `uid`/`gid` spawn options clear them), e.g. the group of Docker's socket.
   */
  readonly groups?: ReadonlyArray<number>
}

/** `command args` as `as` would run it: its uid, gid and supplementary groups (none unless given). */
export const asUserCommand = (
  as: Pick<RunAs, "uid" | "gid" | "groups">,
  command: string,
  args: ReadonlyArray<string>
): [string, Array<string>] => [
  "setpriv",
  [
    `--reuid=${as.uid}`,
    `--regid=${as.gid}`,
    ...(as.groups === undefined || as.groups.length === 0 ? ["--clear-groups"] : [`--groups=${as.groups.join(",")}`]),
    "--",
    command,
    ...args
  ]
]

/** Runs the real CLI (`node apps/cli/src/main.ts`) with PRBOX_HOME set, not on a TTY. */
export const prbox = (
  home: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  as?: RunAs
): Promise<Run> => runEntry(CLI_MAIN, home, args, env, as)

/** What `child` wrote until it closed (killed after 2 minutes). */
export const outputOf = (child: ChildProcessByStdio<Writable | null, Readable, Readable>): Promise<Run> =>
  new Promise((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

/** Runs `entry` (CLI_MAIN, FULL_CLI) as `prbox` runs it. */
export const runEntry = (
  entry: string,
  home: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  as?: RunAs
): Promise<Run> => {
  const environment = { ...process.env, PRBOX_HOME: home, ...env }
  if (as?.groups !== undefined) {
    const [command, withUser] = asUserCommand(as, as.node, [entry, ...args])
    return outputOf(spawn(command, withUser, { env: environment, stdio: ["ignore", "pipe", "pipe"] }))
  }
  return outputOf(
    spawn(as?.node ?? process.execPath, [entry, ...args], {
      env: environment,
      stdio: ["ignore", "pipe", "pipe"],
      ...(as === undefined ? {} : { uid: as.uid, gid: as.gid })
    })
  )
}

/**
 * Runs `entry` as `runEntry` does, but on a terminal `columns` wide (a
 * pseudo-terminal from util-linux's `script`): what it wrote to the terminal
 * (stdout and stderr both) as stdout, its CRLF line ends read as LF.
 */
export const runOnTerminal = async (
  entry: string,
  home: string,
  args: ReadonlyArray<string>,
  columns: number,
  env: Record<string, string> = {}
): Promise<Run> => {
  const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`
  const command = `stty cols ${columns} rows 50; exec ${[process.execPath, entry, ...args].map(quote).join(" ")}`
  const run = await outputOf(
    spawn("script", ["--quiet", "--return", "--command", command, "/dev/null"], {
      env: { ...process.env, PRBOX_HOME: home, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
  )
  return { ...run, stdout: run.stdout.replaceAll("\r\n", "\n") }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Stops the daemon of `home` (by the pid in its lock) if one runs, then removes the home and its containers. */
export const tearDown = async (home: string): Promise<void> => {
  const lock = join(home, "run", "prboxd.lock")
  if (existsSync(lock)) {
    const pid = Number.parseInt(readFileSync(lock, "utf8"), 10)
    if (Number.isSafeInteger(pid) && pid > 0 && alive(pid)) {
      process.kill(pid, "SIGTERM")
      await until("the daemon to exit", () => !alive(pid), { timeoutMs: 30_000 })
    }
  }
  removeHome(home)
}

/** No stack trace: no `    at ` frame lines, no `file.ts:12:3` locations. */
export const hasStackTrace = (text: string): boolean => /\n\s+at\s/.test(text) || /\.ts:\d+:\d+/.test(text)

/**
 * Sandboxes that ended long ago (status `error`), of PR `pr` of github.com/o/r
 * each, written straight into the store (their ids are chosen, not random).
 */
export const seedEndedRows = (stateDir: string, rows: ReadonlyArray<readonly [id: string, pr: number]>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      for (const [id, pr] of rows) {
        yield* repo.insert({
          id: SandboxId.make(id),
          provider: "github",
          host: "github.com",
          account: "",
          repository: "o/r",
          pullRequest: PullRequestNumber.make(pr),
          accessPassword: Redacted.make(`seeded-${id}`),
          createdAt: 1,
          lastActivityAt: 1
        })
        yield* repo.updateStatus(SandboxId.make(id), { to: "error", error: "seeded", stoppedAt: 1 })
      }
    }).pipe(Effect.provide(sqliteRepo({ stateDir })))
  )
