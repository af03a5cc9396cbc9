// `pnpm bench warm`: the installed package's `prbox open` of a further PR of a
// known repository (pool hit, pool miss with a prebuild, a prebuilt
// repository whose updateContentCommand is expensive) against the raw warm
// steps by hand in the same run, and the daemon's idle RSS with a pool of 2.
import { join, resolve } from "node:path"
import { DefaultImage } from "@prbox/engine/node"
import { ensureTestDistribution } from "../images/code-server.ts"
import { imageExists } from "../images/images.ts"
import { type InstalledPackage, installPackage } from "../package/install.ts"
import { BenchStopped, cleanupRoot, log, machineFacts, makeRoot, ms, sh, sleep } from "./common.ts"
import { installedDaemonMain, rssMb, spawnDaemon, waitForHealth } from "./daemon.ts"
import { benchRepo, DEFAULT_REPO } from "./repo.ts"
import {
  endSession,
  poolContainerUse,
  rawMirror,
  rawWarm,
  readWorkspace,
  removeSandbox,
  type Session,
  startSession,
  type TimedOpen,
  timedOpen,
  verifyOpen,
  type WarmImage,
  waitPoolRefilled,
  waitPrebuildReady,
  waitSpareReady
} from "./warm-open.ts"
import { type BenchPullRequest, PREBUILT, preparePrebuiltRemote, prepareRemote, type WarmRepo } from "./warm-repo.ts"
import { reportWarm, type WarmFigures, type WarmRun } from "./warm-report.ts"

export interface WarmOptions {
  /** Timed opens per scenario (after one warm-up, discarded). */
  readonly runs: number
  /** A bare repository to copy (with its refs/pull/N/head); the generated stand-in when absent. */
  readonly repo: string | undefined
}

/** The pool's size: the issue's memory figure is for a pool of 2. */
const POOL_SIZE = 2
/** How long the daemon idles before its RSS is read (as `pnpm bench api`). */
const SETTLE_MS = 3_000

interface Arm {
  readonly name: string
  readonly session: Session
  readonly repo: WarmRepo
  readonly mirror: string
  /** What the opened sandbox's log says of how it started. */
  readonly path: string
  /** Untimed, before each timed open. */
  readonly before: () => Promise<unknown>
  /** Untimed, after each open's own checks. */
  readonly check: (opened: TimedOpen) => void
}

/** A PR opened untimed (a first open, to make the prebuild; one from it, to fill the pool), then removed. */
const prime = async (session: Session, repo: WarmRepo, pr: BenchPullRequest, what: string) => {
  log(`${what}: prbox open --pr ${pr.number} ...`)
  const opened = await timedOpen(session, repo.path, pr)
  log(`${what}: ${ms(opened.ms)}`)
  await removeSandbox(session, opened.row.id)
}

/**
 * One warm-up and `runs` timed opens of `prs`, each beside the raw warm
 * steps of the same PR, who goes first alternating, each started with the
 * pool refilled; every open checked (its head, its log's path, another
 * password refused) and removed.
 */
const measure = async (
  root: string,
  image: WarmImage,
  arm: Arm,
  prs: ReadonlyArray<BenchPullRequest>
): Promise<WarmRun> => {
  const run: { opens: Array<TimedOpen>; rawMs: Array<number> } = { opens: [], rawMs: [] }
  for (const [i, pr] of prs.entries()) {
    await arm.before()
    const raw = () => rawWarm(root, image, arm.mirror, arm.repo.path, pr)
    // Checked, removed, and the pool refilled before raw goes: each side runs on a machine as quiet as the other's.
    const prbox = async () => {
      const opened = await timedOpen(arm.session, arm.repo.path, pr)
      await verifyOpen(arm.session, opened, pr, arm.path)
      arm.check(opened)
      await removeSandbox(arm.session, opened.row.id)
      await arm.before()
      return opened
    }
    const [rawMs, opened] =
      i % 2 === 0 ? [await raw(), await prbox()] : await prbox().then(async (o) => [await raw(), o] as const)
    log(
      `${arm.name} ${i === 0 ? "warm-up" : `${i}/${prs.length - 1}`} (PR ${pr.number}): raw warm ${ms(rawMs)}, prbox ${ms(opened.ms)}`
    )
    if (i > 0) {
      run.opens.push(opened)
      run.rawMs.push(rawMs)
    }
  }
  return run
}

/**
 * Opens with the pool off (`warmPool.size: 0`): a first open, untimed, then
 * `prs` measured. `path`: what their logs say of it ("from prebuild": the
 * prebuild the first open made is waited for; an environment without
 * create-time steps then has none, and takes today's path).
 */
const missArm = async (
  context: { readonly root: string; readonly image: WarmImage; readonly installed: InstalledPackage },
  arm: Pick<Arm, "name" | "repo" | "mirror" | "check" | "path">,
  first: BenchPullRequest,
  prs: ReadonlyArray<BenchPullRequest>
): Promise<WarmRun> => {
  const { root, image, installed } = context
  const session = await startSession(root, `home-${arm.name.replace(/\W/g, "-")}`, installed, { image, poolSize: 0 })
  const prebuilt = arm.path === "from prebuild"
  try {
    await prime(session, arm.repo, first, `${arm.name}: first open`)
    if (prebuilt) await waitPrebuildReady(session)
    // Each open starts with the prebuild's spare made (as the pool's are refilled): opens at least the foreground's settle apart.
    const before = prebuilt ? () => waitSpareReady(session) : async () => {}
    return await measure(root, image, { ...arm, session, before }, prs)
  } finally {
    await endSession(session)
  }
}

/** The daemon's idle RSS with the pool full, after a restart (its compile cache filled, as `pnpm bench api` reads it). */
const idleMemory = async (session: Session, installedMain: string) => {
  await waitPoolRefilled(session, POOL_SIZE)
  await sleep(SETTLE_MS)
  const afterOpensMb = rssMb(session.daemon.pid)
  await session.daemon.stop()
  const daemon = spawnDaemon(session.home, {}, installedMain)
  const restarted = { ...session, daemon }
  await waitForHealth(session.socketPath, daemon)
  const pool = await waitPoolRefilled(restarted, POOL_SIZE)
  await sleep(SETTLE_MS)
  return {
    session: restarted,
    figures: {
      idleMb: rssMb(daemon.pid),
      afterOpensMb,
      poolEntries: pool.length,
      poolContainers: poolContainerUse(restarted)
    }
  }
}

/** `--repo`'s repository, absolute; one whose HEAD git cannot read stops the bench with a line saying so. */
const bareRepository = async (path: string): Promise<string> => {
  const absolute = resolve(path)
  const head = await sh("git", ["--git-dir", absolute, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).catch(
    () => ""
  )
  if (head === "") throw new BenchStopped(`--repo ${absolute}: not a git repository with a HEAD commit`)
  return absolute
}

/** prbox's default image (built by `scripts/setup`) and the tests' code-server distribution. */
const warmImage = async (): Promise<WarmImage> => {
  const tag = DefaultImage.DEFAULT_IMAGE
  if (!imageExists(tag)) throw new BenchStopped(`${tag} is missing: run scripts/setup --with-test-images`)
  return { tag, distribution: await ensureTestDistribution() }
}

export const runWarm = async (options: WarmOptions): Promise<void> => {
  if (options.runs < 1 || options.runs > 40) throw new Error("--runs must be between 1 and 40")
  const facts = machineFacts()
  const startedAt = performance.now()
  const image = await warmImage()
  const source =
    options.repo === undefined ? (await benchRepo(DEFAULT_REPO, log)).path : await bareRepository(options.repo)
  const root = makeRoot("warm")
  let figures: WarmFigures | undefined
  try {
    log("installing the package (built when missing or stale) ...")
    const installed = await installPackage(join(root, "prefix"))
    const main = installedDaemonMain(installed)
    log(`copying ${source} and choosing its PRs ...`)
    const repo = await prepareRemote(source, root, options.runs + 3)
    const prebuiltRepo = await preparePrebuiltRemote(source, root, image.tag, options.runs + 2)
    const mirror = await rawMirror(root, repo.path, "remote")
    const prebuiltMirror = await rawMirror(root, prebuiltRepo.path, "prebuilt")
    const [first, second, ...timedPrs] = repo.pullRequests
    const [prebuiltFirst, ...prebuiltPrs] = prebuiltRepo.pullRequests
    if (first === undefined || second === undefined || prebuiltFirst === undefined) throw new Error("too few PRs")
    const none = () => {}

    // Pool hit: a first open (the prebuild made after it), one from the prebuild (the pool filled after it).
    let hit = await startSession(root, "home-hit", installed, { image, poolSize: POOL_SIZE })
    let poolHit: WarmRun
    let memory: Awaited<ReturnType<typeof idleMemory>>["figures"]
    try {
      await prime(hit, repo, first, "pool hit: first open")
      await waitPrebuildReady(hit)
      await prime(hit, repo, second, "pool hit: an open from the prebuild")
      const arm = { name: "pool hit", session: hit, repo, mirror, path: "from the warm pool", check: none }
      poolHit = await measure(root, image, { ...arm, before: () => waitPoolRefilled(hit, POOL_SIZE) }, timedPrs)
      const idle = await idleMemory(hit, main)
      hit = idle.session
      memory = idle.figures
    } finally {
      await endSession(hit)
    }

    // Pool miss: the pool off, so today's path (the repository has no create-time steps, so no prebuild).
    const fromPrebuild = { root, image, installed }
    const today = { name: "pool miss", repo, mirror, check: none, path: "" }
    const poolMiss = await missArm(fromPrebuild, today, first, timedPrs)
    // Prebuilt: updateContentCommand sleeps 30 s unless the lockfile's hash matches its stamp.
    const holdsInstall = (opened: TimedOpen) => {
      for (const file of [PREBUILT.installed, PREBUILT.stamp]) {
        const text = readWorkspace(opened.row, file).trim()
        if (text !== prebuiltRepo.lockHash)
          throw new Error(`${file} in ${opened.row.id} holds "${text}", not the lock's hash`)
      }
    }
    const prebuilt = await missArm(
      fromPrebuild,
      { name: "prebuilt", repo: prebuiltRepo, mirror: prebuiltMirror, check: holdsInstall, path: "from prebuild" },
      prebuiltFirst,
      prebuiltPrs
    )
    figures = {
      source,
      repo,
      prebuiltRepo,
      poolSize: POOL_SIZE,
      poolHit,
      poolMiss,
      prebuilt,
      memory,
      version: installed.version
    }
  } finally {
    const removed = cleanupRoot(root)
    log(`removed ${removed} leftover container(s) and ${root}`)
  }
  reportWarm(options, facts, image.tag, figures, performance.now() - startedAt)
}
