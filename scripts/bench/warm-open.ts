// One prboxd of `pnpm bench warm` (the installed package's, on its own
// PRBOX_HOME) and what the bench does through it: a `prbox open` timed as a
// user waits for it, the raw warm steps beside it, and the waits it does not
// time (a ready prebuild, a refilled pool).
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { delimiter, dirname, join, sep } from "node:path"
import { POOL_LABEL } from "@prbox/domain"
import type { CodeServerDistribution } from "@prbox/engine"
import type { InstalledPackage } from "../package/install.ts"
import { timed } from "./cli.ts"
import { removeContainers, removeUnder, sh, shSync, sleep } from "./common.ts"
import { api, type Daemon, expectJson, installedDaemonMain, spawnDaemon, waitForHealth } from "./daemon.ts"
import { BENCH_LABEL } from "./engine.ts"
import { pollHealth, rawOpen } from "./open.ts"
import { openedId, poolRefilled, statsMemoryMb } from "./warm-plan.ts"
import type { BenchPullRequest } from "./warm-repo.ts"

const PREBUILD_TIMEOUT_MS = 15 * 60_000
const POOL_TIMEOUT_MS = 5 * 60_000
const POLL_MS = 200

export interface Session {
  readonly home: string
  readonly socketPath: string
  readonly daemon: Daemon
  readonly env: NodeJS.ProcessEnv
  readonly prbox: string
}

/**
 * What the bench's sandboxes run: prbox's default image (no image configured)
 * with prbox's code-server distribution mounted, as a repository without a
 * devcontainer.json gets; the distribution is the one the tests built.
 */
export interface WarmImage {
  readonly tag: string
  readonly distribution: CodeServerDistribution
}

/**
 * prboxd on `root/<name>`: the default image, prebuilds on, `warmPool.size`
 * of `poolSize`, its containers labelled the bench's. Its home holds the
 * code-server distribution already (hard links to `image`'s), as a user's
 * does after the first open built it.
 */
export const startSession = async (
  root: string,
  name: string,
  installed: InstalledPackage,
  config: { readonly image: WarmImage; readonly poolSize: number }
): Promise<Session> => {
  const home = join(root, name)
  mkdirSync(join(home, "code-server"), { recursive: true, mode: 0o700 })
  const { distribution } = config.image
  await sh("cp", ["-al", distribution.root, join(home, "code-server", distribution.key)])
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({
      labels: { [BENCH_LABEL]: "1" },
      healthTimeoutSeconds: 120,
      prebuilds: { maxGiB: 10, keepDays: 7 },
      warmPool: { size: config.poolSize, idleMinutes: 30 }
    })
  )
  const daemon = spawnDaemon(home, {}, installedDaemonMain(installed))
  const socketPath = join(home, "run", "prboxd.sock")
  await waitForHealth(socketPath, daemon)
  // The project's Node first: the installed bins run `node` from PATH.
  const env = {
    ...process.env,
    PRBOX_HOME: home,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`
  }
  return { home, socketPath, daemon, env, prbox: installed.prbox }
}

/** Stops the daemon and removes what it made (containers, volumes, prebuild images) and its home. */
export const endSession = async (session: Session): Promise<void> => {
  await session.daemon.stop()
  removeUnder(session.home)
  rmSync(session.home, { recursive: true, force: true })
}

export interface SandboxRow {
  readonly id: string
  readonly status: string
  readonly hostPort: number | null
  readonly workspacePath: string | null
  readonly sourceCommit: string | null
  readonly error: string | null
}

/** code-server's login on `port`: true when `password` gets the session cookie and the redirect. */
const logsIn = async (port: number, password: string): Promise<boolean> => {
  const response = await fetch(`http://127.0.0.1:${port}/login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: `password=${encodeURIComponent(password)}`,
    signal: AbortSignal.timeout(10_000)
  })
  await response.arrayBuffer()
  return response.status === 302 && (response.headers.get("set-cookie") ?? "").length > 0
}

/** `file` of the sandbox's workspace folder on this host, refused if its real path leaves the folder. */
const workspaceFile = (workspacePath: string, file: string): Buffer => {
  const folder = realpathSync(workspacePath)
  const path = realpathSync(join(folder, file))
  if (!path.startsWith(`${folder}${sep}`)) throw new Error(`${file} resolves outside the workspace (${path})`)
  return readFileSync(path)
}

export interface TimedOpen {
  readonly ms: number
  /** Where the time went: the CLI process, /healthz, the password fetched and POST /login, the PR's file read. */
  readonly phases: { readonly process: number; readonly health: number; readonly login: number; readonly file: number }
  readonly row: SandboxRow
}

/**
 * `prbox open <remote> --pr N --json` as a whole process, then until
 * code-server answers /healthz, its password (GET …/password) logs in, and
 * the PR's file is in the workspace: the time a user waits for a usable sandbox.
 */
export const timedOpen = async (session: Session, remote: string, pr: BenchPullRequest): Promise<TimedOpen> => {
  const t0 = performance.now()
  const run = await timed(session.prbox, ["open", remote, "--pr", String(pr.number), "--json"], session.env)
  const t1 = performance.now()
  if (run.code !== 0) {
    throw new Error(
      `prbox open --pr ${pr.number} exited ${run.code}: ${(run.stderr || run.stdout).trim().slice(-2000)}`
    )
  }
  const id = openedId(run.stdout)
  const row = expectJson<SandboxRow>(
    await api(session.socketPath, "GET", `/v1/sandboxes/${id}`),
    "GET /v1/sandboxes/:id"
  )
  if (row.hostPort === null || row.workspacePath === null)
    throw new Error(`PR ${pr.number}: ${id} has no port or workspace`)
  await pollHealth(row.hostPort)
  const t2 = performance.now()
  const { password } = expectJson<{ password: string }>(
    await api(session.socketPath, "GET", `/v1/sandboxes/${id}/password`),
    "GET /v1/sandboxes/:id/password"
  )
  if (!(await logsIn(row.hostPort, password))) throw new Error(`PR ${pr.number}: ${id}'s password did not log in`)
  const t3 = performance.now()
  const held = workspaceFile(row.workspacePath, pr.file)
  if (!held.equals(pr.content)) throw new Error(`PR ${pr.number}: ${pr.file} in ${id}'s workspace is not the PR's`)
  const t4 = performance.now()
  return { ms: t4 - t0, phases: { process: t1 - t0, health: t2 - t1, login: t3 - t2, file: t4 - t3 }, row }
}

/**
 * What a timed open must also be, checked after the clock stopped: running
 * at the PR's head, its log saying `path` (how it started), and a password
 * that is not its own refused.
 */
export const verifyOpen = async (session: Session, opened: TimedOpen, pr: BenchPullRequest, path: string) => {
  const { row } = opened
  if (row.status !== "running") throw new Error(`PR ${pr.number}: ${row.id} is ${row.status}: ${row.error ?? ""}`)
  if (row.sourceCommit !== pr.head)
    throw new Error(`PR ${pr.number}: ${row.id} is at ${row.sourceCommit}, not ${pr.head}`)
  const log = await sandboxLog(session, row.id)
  if (!log.includes(path))
    throw new Error(`PR ${pr.number}: ${row.id}'s log does not say "${path}":\n${log.slice(-3000)}`)
  if (await logsIn(row.hostPort ?? 0, randomBytes(12).toString("hex"))) {
    throw new Error(`PR ${pr.number}: ${row.id} let another password in`)
  }
}

/** The sandbox's progress log as the daemon answers it (JSON). */
export const sandboxLog = async (session: Session, id: string): Promise<string> =>
  (await api(session.socketPath, "GET", `/v1/sandboxes/${id}/logs?limit=1000`)).body

/** A workspace file of a sandbox the bench opened, as text (the prebuilt repository's step output). */
export const readWorkspace = (row: SandboxRow, file: string): string =>
  workspaceFile(row.workspacePath ?? "", file).toString("utf8")

export const removeSandbox = async (session: Session, id: string): Promise<void> => {
  const answer = await api(session.socketPath, "DELETE", `/v1/sandboxes/${id}?force=true`)
  if (answer.status >= 300) throw new Error(`DELETE /v1/sandboxes/${id} answered ${answer.status}: ${answer.body}`)
}

const until = async <A>(what: string, timeoutMs: number, probe: () => Promise<A | undefined>): Promise<A> => {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error(`${what}: not within ${Math.round(timeoutMs / 1000)} s`)
    await sleep(POLL_MS)
  }
}

interface PrebuildRow {
  readonly id: string
  readonly state: string
  readonly reason: string | null
  readonly baseCommit: string
  readonly spare?: boolean
}

const prebuildRows = async (session: Session) =>
  expectJson<{ prebuilds: ReadonlyArray<PrebuildRow> }>(
    await api(session.socketPath, "GET", "/v1/prebuilds"),
    "GET /v1/prebuilds"
  ).prebuilds

/** Waits until the daemon has a ready prebuild (made in the background after an open); a failed one ends the bench. */
export const waitPrebuildReady = (session: Session): Promise<PrebuildRow> =>
  until("a ready prebuild", PREBUILD_TIMEOUT_MS, async () => {
    const prebuilds = await prebuildRows(session)
    const failed = prebuilds.find((p) => p.state === "failed")
    if (failed !== undefined) throw new Error(`prebuild ${failed.id} failed: ${failed.reason ?? ""}`)
    return prebuilds.find((p) => p.state === "ready")
  })

/** Waits until a ready prebuild has its spare (made in the background, once no open holds the foreground). */
export const waitSpareReady = (session: Session): Promise<PrebuildRow> =>
  until("a prebuild's spare", POOL_TIMEOUT_MS, async () =>
    (await prebuildRows(session)).find((p) => p.state === "ready" && p.spare === true)
  )

export interface PoolEntryView {
  readonly id: string
  readonly state: string
  readonly port: number | null
}

/** Waits until `GET /v1/pool` shows `size` ready entries and none being made. */
export const waitPoolRefilled = (session: Session, size: number): Promise<ReadonlyArray<PoolEntryView>> =>
  until(`a pool of ${size} ready`, POOL_TIMEOUT_MS, async () => {
    const entries = expectJson<ReadonlyArray<PoolEntryView>>(
      await api(session.socketPath, "GET", "/v1/pool"),
      "GET /v1/pool"
    )
    return poolRefilled(entries, size) ? entries : undefined
  })

export interface ContainerUse {
  readonly memMb: number
  readonly cpuPercent: number
}

/** `docker stats` of the session's pool containers (labelled `dev.prbox.pool`), one sample each. */
export const poolContainerUse = (session: Session): ReadonlyArray<ContainerUse> => {
  const ids = shSync("docker", [
    "ps",
    "-q",
    "--filter",
    `label=${POOL_LABEL}`,
    "--filter",
    `label=dev.prbox.home=${session.home}`
  ])
    .split("\n")
    .filter((id) => id.length > 0)
  if (ids.length === 0) return []
  return shSync("docker", ["stats", "--no-stream", "--format", "{{.CPUPerc}}\t{{.MemUsage}}", ...ids])
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const [cpu = "", mem = ""] = line.split("\t")
      return { cpuPercent: Number.parseFloat(cpu), memMb: statsMemoryMb(mem) }
    })
}

/**
 * The raw warm steps by hand: `git clone --local` of `mirror` (a bare clone
 * of the remote, as a developer's own clone), the PR ref fetched, checked
 * out, `docker run` of the image with the distribution mounted, /healthz; the container and folder removed after.
 */
export const rawWarm = async (
  root: string,
  image: WarmImage,
  mirror: string,
  remote: string,
  pr: BenchPullRequest
): Promise<number> => {
  const dir = join(root, `raw-${pr.number}-${randomBytes(4).toString("hex")}`)
  const run = await rawOpen(
    root,
    image.tag,
    dir,
    ["clone", "--quiet", "--local", "--no-checkout", mirror],
    remote,
    remote,
    pr.number,
    image.distribution
  )
  removeContainers([run.containerId])
  rmSync(dir, { recursive: true, force: true })
  return run.ms
}

/** The raw steps' mirror of `remote`: a bare clone, as a developer's existing clone would have it. */
export const rawMirror = async (root: string, remote: string, name: string): Promise<string> => {
  const mirror = join(root, `${name}-raw-mirror.git`)
  await sh("git", ["clone", "--quiet", "--bare", "--no-local", remote, mirror])
  return mirror
}
