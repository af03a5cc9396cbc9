import { existsSync, statfsSync, statSync } from "node:fs"
import { join } from "node:path"
import { type ClientHome, legacyWarning, PrboxClient, prebuildSummary } from "@prbox/client"
import { statePaths } from "@prbox/domain"
import type { EngineReport } from "@prbox/engine/node"
import { Effect } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { type ServiceState, UserService } from "./UserService.ts"

export type Level = "ok" | "warn" | "fail"

export interface Check {
  readonly name: string
  readonly level: Level
  readonly detail: string
}

/** Docker releases before this one can expose ports published on 127.0.0.1 beyond the host. */
export const MIN_DOCKER = "28.3.3"
const MIN_NODE = "22.19.0"
const MIN_FREE_BYTES = 5 * 1024 ** 3

const parseVersion = (text: string): ReadonlyArray<number> =>
  (/(\d+)\.(\d+)(?:\.(\d+))?/.exec(text)?.slice(1) ?? []).map((part) => Number(part ?? 0))

/** `a < b` for dotted versions (missing parts are 0). */
export const versionBelow = (a: string, b: string): boolean => {
  const left = parseVersion(a)
  const right = parseVersion(b)
  for (let index = 0; index < 3; index++) {
    const x = left[index] ?? 0
    const y = right[index] ?? 0
    if (x !== y) return x < y
  }
  return false
}

const gitVersion = Effect.gen(function* () {
  const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
  const version = yield* spawner.string(ChildProcess.make("git", ["--version"], { stdin: "ignore" }))
  return { name: "git", level: "ok", detail: version.trim() } satisfies Check
}).pipe(
  Effect.timeout("5 seconds"),
  Effect.orElseSucceed((): Check => ({ name: "git", level: "fail", detail: "git is not installed or not on PATH" })),
  Effect.scoped
)

/** What doctor says of an engine it could not inspect at all (the engine module did not load). */
const uninspected = (detail: string): EngineReport => ({
  address: "",
  source: "",
  version: null,
  apiVersion: null,
  location: "unknown",
  detail
})

/** The engine prbox uses (config.json, DOCKER_HOST, the Docker context), its version, and where it runs. */
const inspectEngine = (home: string) =>
  Effect.tryPromise({
    // The engine and dockerode are loaded only here: every other command starts faster without them.
    try: () => import("@prbox/engine/node"),
    catch: () => "the engine module of this installation could not be loaded"
  }).pipe(
    Effect.flatMap((engine) => engine.inspectEngine({ home })),
    Effect.catch((detail) => Effect.succeed(uninspected(detail)))
  )

/** Docker's version on the chosen engine; older than MIN_DOCKER warns. */
export const dockerCheck = (engine: EngineReport): Check => {
  if (engine.version === null) {
    return { name: "docker", level: "fail", detail: `Docker is not reachable: ${engine.detail}` }
  }
  const versions = `Docker ${engine.version} (API ${engine.apiVersion})`
  return versionBelow(engine.version, MIN_DOCKER)
    ? {
        name: "docker",
        level: "warn",
        detail: `${versions} is older than ${MIN_DOCKER}: upgrade it, older engines can expose ports published on 127.0.0.1`
      }
    : { name: "docker", level: "ok", detail: versions }
}

/** Which engine, where its address came from, and local or remote as the bind-mount probe found. */
export const engineCheck = (engine: EngineReport): Check => {
  if (engine.address === "") return { name: "engine", level: "fail", detail: engine.detail }
  const which = `${engine.address} (${engine.source})`
  if (engine.version === null) return { name: "engine", level: "fail", detail: `${which}: ${engine.detail}` }
  return {
    name: "engine",
    level: engine.location === "unknown" ? "warn" : "ok",
    detail: `${which}: ${engine.location === "unknown" ? "local or remote unknown" : engine.location}; ${engine.detail}`
  }
}

const modeCheck = (name: string, path: string, expected: number, optional: boolean): Check => {
  if (!existsSync(path)) {
    return { name, level: optional ? "ok" : "warn", detail: `${path} does not exist yet` }
  }
  const stats = statSync(path)
  const mode = stats.mode & 0o777
  const uid = process.getuid?.()
  if (uid !== undefined && stats.uid !== uid) {
    return { name, level: "fail", detail: `${path} is owned by uid ${stats.uid}, not by you (uid ${uid})` }
  }
  return mode === expected
    ? { name, level: "ok", detail: `${path} is ${mode.toString(8)}` }
    : { name, level: "fail", detail: `${path} is ${mode.toString(8)}, expected ${expected.toString(8)}` }
}

const diskCheck = (home: string): Check => {
  try {
    const where = existsSync(home) ? home : join(home, "..")
    const stats = statfsSync(where)
    const free = stats.bavail * stats.bsize
    const gib = (free / 1024 ** 3).toFixed(1)
    return free < MIN_FREE_BYTES
      ? { name: "disk", level: "warn", detail: `${gib} GiB free under ${where}; workspaces and images need space` }
      : { name: "disk", level: "ok", detail: `${gib} GiB free under ${where}` }
  } catch {
    return { name: "disk", level: "warn", detail: `cannot read free space of ${home}` }
  }
}

const notChecked: Check = { name: "legacy", level: "warn", detail: "not checked: the daemon does not answer" }

/** Rows schema v1 wrote without a password: each blocks its PR until deleted. */
const legacyCheck = Effect.gen(function* () {
  const client = yield* PrboxClient
  const legacy = (yield* client.list({ all: true })).filter((view) => legacyWarning(view) !== undefined)
  if (legacy.length === 0)
    return { name: "legacy", level: "ok" as const, detail: "no legacy sandboxes without a password" }
  return {
    name: "legacy",
    level: "warn" as const,
    detail: `${legacy.length} legacy sandbox(es) without a password, stopped and blocking their PR: delete each with \`prbox rm <id>\` (${legacy.map((view) => view.id).join(", ")}) and open the PR again`
  }
}).pipe(
  Effect.catch((error) =>
    Effect.succeed<Check>({ name: "legacy", level: "warn", detail: `could not list sandboxes: ${error.message}` })
  )
)

/** Prebuilds: how many are ready, being made and failed, and their disk use of the cap; or off. */
const prebuildsCheck = Effect.gen(function* () {
  const status = yield* (yield* PrboxClient).prebuilds
  return { name: "prebuilds", level: "ok" as const, detail: prebuildSummary(status) }
}).pipe(
  Effect.catch((error) =>
    Effect.succeed<Check>({ name: "prebuilds", level: "warn", detail: `could not list prebuilds: ${error.message}` })
  )
)

const MANAGER_NAMES = { systemd: "systemd user unit", launchd: "launchd agent", none: "user service" } as const

/** Whether prboxd runs as a user service; without one it starts on demand, which is fine. */
export const serviceCheck = (state: ServiceState): Check => {
  const what = MANAGER_NAMES[state.manager]
  if (state.manager === "none") return { name: "service", level: "ok", detail: state.detail }
  if (!state.installed) {
    const why = state.available ? "`prbox daemon install` runs prboxd at login" : state.detail
    return { name: "service", level: "ok", detail: `no ${what} (${state.file}); prboxd starts on demand (${why})` }
  }
  if (!state.available) {
    return { name: "service", level: "warn", detail: `${what} ${state.file} is installed, but ${state.detail}` }
  }
  return state.running
    ? {
        name: "service",
        level: "ok",
        detail: `${what} ${state.file} is installed and running${state.pid === null ? "" : ` (pid ${state.pid})`}: ${state.detail}`
      }
    : { name: "service", level: "warn", detail: `${what} ${state.file} is installed but not running: ${state.detail}` }
}

/** What `prbox doctor --json` prints: stable field names for scripts. */
export interface DoctorReport {
  /** No check failed. */
  readonly ok: boolean
  readonly checks: ReadonlyArray<Check>
  readonly service: ServiceState
  readonly engine: EngineReport
}

/** Every check; none of them changes anything. */
export const doctor = (home: ClientHome) =>
  Effect.gen(function* () {
    const client = yield* PrboxClient
    const service = yield* (yield* UserService).state
    const node: Check = versionBelow(process.versions.node, MIN_NODE)
      ? { name: "node", level: "fail", detail: `Node ${process.versions.node} is older than ${MIN_NODE}` }
      : { name: "node", level: "ok", detail: `Node ${process.versions.node}` }
    const engine = yield* inspectEngine(home.home)
    const git = yield* gitVersion
    const daemon = yield* client.checkVersion.pipe(
      Effect.map(
        (info): Check => ({
          name: "daemon",
          level: "ok",
          detail: `prboxd ${info.version} (pid ${info.pid}) answers on ${home.socketPath}`
        })
      ),
      Effect.catch((error) =>
        Effect.succeed<Check>({
          name: "daemon",
          level: error._tag === "DaemonUnreachable" ? "warn" : "fail",
          detail:
            error._tag === "DaemonUnreachable"
              ? `not running (${error.message}); \`prbox open\` starts it`
              : error.message
        })
      )
    )
    const legacy = daemon.level === "ok" ? yield* legacyCheck : notChecked
    const prebuilds: Check = daemon.level === "ok" ? yield* prebuildsCheck : { ...notChecked, name: "prebuilds" }
    const paths = statePaths(home.home)
    const checks: ReadonlyArray<Check> = [
      node,
      dockerCheck(engine),
      engineCheck(engine),
      git,
      diskCheck(home.home),
      modeCheck("state dir", home.home, 0o700, false),
      modeCheck("run dir", paths.run, 0o700, true),
      modeCheck("log dir", paths.logs, 0o700, true),
      modeCheck("database", paths.database, 0o600, true),
      modeCheck("socket", home.socketPath, 0o600, true),
      daemon,
      serviceCheck(service),
      legacy,
      prebuilds
    ]
    return { ok: checks.every((check) => check.level !== "fail"), checks, service, engine } satisfies DoctorReport
  })
