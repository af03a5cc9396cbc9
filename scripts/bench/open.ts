import { randomBytes } from "node:crypto"
import { mkdirSync, rmSync } from "node:fs"
import { loadavg } from "node:os"
import { join } from "node:path"
import { HEALTH_PROBE_FAST_MS, HEALTH_PROBE_UNHEARD_MS, type SandboxId } from "@prbox/domain"
import type { CodeServerDistribution } from "@prbox/engine"
import { codeServerImage } from "../images/code-server.ts"
import { healthzImage } from "../images/healthz.ts"
import { ensureImage, imageExists } from "../images/images.ts"
import {
  check,
  cleanupRoot,
  containersUnder,
  describeMachine,
  log,
  machineFacts,
  makeRoot,
  median,
  ms,
  removeContainers,
  round,
  sh,
  sleep,
  table,
  writeResult
} from "./common.ts"
import { BENCH_LABEL, type Engine, makeEngine, type Recorder, type Span } from "./engine.ts"
import { benchRepo, DEFAULT_REPO } from "./repo.ts"

export interface OpenOptions {
  /** `code-server` (default: the real one), `healthz` (a stand-in that answers at once), or an image tag. */
  readonly image: string
  readonly runs: number
}

const TARGETS = { coldRatio: 1.05, warmRatio: 1.0, reopenMs: 20 } as const
/** How often the raw baseline polls /healthz: as tight as a script reasonably can, so it measures readiness itself. */
const RAW_POLL_MS = 10
/** prbox's health wait, named by its schedule (healthProbePause in packages/domain). */
const HEALTH_WAIT = `health wait (probes ${HEALTH_PROBE_UNHEARD_MS} ms apart, ${HEALTH_PROBE_FAST_MS} ms once listening)`
const REOPENS_PER_RUN = 10
const HEALTH_TIMEOUT_MS = 180_000

export const resolveImage = async (name: string): Promise<{ tag: string; label: string }> => {
  if (name === "healthz") {
    return {
      tag: await ensureImage(healthzImage),
      label: "healthz stand-in (busybox; measures prbox, not code-server)"
    }
  }
  if (name === "code-server") return { tag: await ensureImage(codeServerImage), label: "real code-server" }
  if (!imageExists(name)) throw new Error(`image ${name} is not present locally`)
  return { tag: name, label: "custom image" }
}

// --- raw baselines ------------------------------------------------------------

interface Measured {
  readonly ms: number
  readonly spans: ReadonlyArray<Span>
  readonly probes: number
}

const step = async <A>(spans: Recorder, op: string, work: Promise<A>): Promise<A> => {
  const start = performance.now()
  const result = await work
  spans.push({ op, start, end: performance.now(), ok: true })
  return result
}

/** Polls /healthz until it answers 200; returns the number of probes. */
export const pollHealth = async (port: number): Promise<number> => {
  const deadline = performance.now() + HEALTH_TIMEOUT_MS
  for (let probes = 1; ; probes++) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (response.ok) return probes
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`127.0.0.1:${port}/healthz did not answer`)
    await sleep(RAW_POLL_MS)
  }
}

const dockerPort = async (containerId: string): Promise<number> => {
  const out = await sh("docker", ["port", containerId, "8080/tcp"])
  const port = Number(out.split("\n")[0]?.split(":").at(-1))
  if (!Number.isInteger(port) || port <= 0) throw new Error(`docker port ${containerId}: ${out}`)
  return port
}

/** code-server's arguments, as prbox gives them (the image's entrypoint is code-server). */
export const CODE_SERVER_ARGS = [
  "--bind-addr",
  "0.0.0.0:8080",
  "--auth",
  "password",
  "--disable-telemetry",
  "--disable-update-check",
  "/workspace"
]

/** `docker run`/`create` options as prbox runs a sandbox: init, the port on 127.0.0.1, `/workspace` from `workspace` (a path or a volume). */
export const sandboxOptions = (workspace: string): Array<string> => [
  "--init",
  "-p",
  "127.0.0.1::8080",
  "-v",
  `${workspace}:/workspace`,
  "-w",
  "/workspace",
  "-e",
  `PASSWORD=${randomBytes(12).toString("hex")}`,
  "--label",
  `${BENCH_LABEL}=1`
]

/** Where prbox mounts its code-server distribution (the engine's CodeServerSpec.ts). */
const MOUNT = "/opt/prbox/code-server"

/**
 * `docker run` as prbox would run it (sandboxOptions, code-server's
 * arguments): the image's own code-server, or prbox's `distribution`
 * mounted read-only and run by its own Node.
 */
const dockerRun = (
  root: string,
  image: string,
  workspace: string,
  distribution?: CodeServerDistribution
): Promise<string> =>
  sh("docker", [
    "run",
    "-d",
    ...sandboxOptions(workspace),
    "--label",
    `dev.prbox.home=${root}`,
    ...(distribution === undefined
      ? [image]
      : [
          "-v",
          `${distribution.root}:${MOUNT}:ro`,
          "--entrypoint",
          `${MOUNT}/${distribution.node}`,
          image,
          `${MOUNT}/${distribution.entry}`
        ]),
    ...CODE_SERVER_ARGS
  ])

interface RawRun extends Measured {
  readonly containerId: string
  readonly dir: string
}

/** clone + PR ref + checkout + docker run + healthz; `clone` is the only difference between cold and warm. */
export const rawOpen = async (
  root: string,
  image: string,
  dir: string,
  clone: ReadonlyArray<string>,
  remote: string,
  fetchFrom: string,
  pr: number,
  distribution?: CodeServerDistribution
): Promise<RawRun> => {
  const spans: Recorder = []
  const t0 = performance.now()
  await step(spans, "git clone", sh("git", [...clone, dir]))
  await step(spans, "git fetch", sh("git", ["-C", dir, "fetch", "--quiet", fetchFrom, `refs/pull/${pr}/head`]))
  await step(spans, "git checkout", sh("git", ["-C", dir, "checkout", "--quiet", "FETCH_HEAD"]))
  const containerId = await step(spans, "docker run", dockerRun(root, image, dir, distribution))
  const port = await step(spans, "docker port", dockerPort(containerId))
  const probes = await step(spans, "health wait", pollHealth(port))
  const total = performance.now() - t0
  const head = await sh("git", ["-C", dir, "rev-parse", "HEAD"])
  const expected = await sh("git", ["--git-dir", remote, "rev-parse", `refs/pull/${pr}/head`])
  if (head !== expected) throw new Error(`raw checkout of PR ${pr} is at ${head}, expected ${expected}`)
  return { ms: total, spans, probes, containerId, dir }
}

const rawRestart = async (containerId: string): Promise<Measured> => {
  const spans: Recorder = []
  const t0 = performance.now()
  await step(spans, "docker stop", sh("docker", ["stop", containerId]))
  await step(spans, "docker start", sh("docker", ["start", containerId]))
  const port = await step(spans, "docker port", dockerPort(containerId))
  const probes = await step(spans, "health wait", pollHealth(port))
  return { ms: performance.now() - t0, spans, probes }
}

// --- prbox --------------------------------------------------------------------

interface PrboxRun extends Measured {
  readonly id: SandboxId
  readonly t0: number
  readonly t1: number
  readonly tStop?: number
}

const windowOf = (recorder: Recorder, t0: number, t1: number): Array<Span> =>
  recorder.filter((span) => span.start >= t0 && span.end <= t1).sort((a, b) => a.start - b.start)

const prboxOpen = async (engine: Engine, recorder: Recorder, remote: string, pr: number): Promise<PrboxRun> => {
  const { sandboxes, run } = engine
  const t0 = performance.now()
  const opened = await run(sandboxes.open({ input: remote, pr }))
  await run(sandboxes.awaitIdle(opened.id))
  const row = await run(sandboxes.get(opened.id))
  const t1 = performance.now()
  if (row.status !== "running") throw new Error(`prbox open of PR ${pr} ended ${row.status}: ${row.error ?? ""}`)
  const expected = await sh("git", ["--git-dir", remote, "rev-parse", `refs/pull/${pr}/head`])
  if (row.sourceCommit !== expected)
    throw new Error(`prbox opened PR ${pr} at ${row.sourceCommit}, expected ${expected}`)
  const spans = windowOf(recorder, t0, t1)
  return { ms: t1 - t0, spans, probes: spans.filter((s) => s.op === "health.probe").length, id: row.id, t0, t1 }
}

const prboxReopen = async (engine: Engine, remote: string, pr: number, id: SandboxId): Promise<number> => {
  const t0 = performance.now()
  const row = await engine.run(engine.sandboxes.open({ input: remote, pr }))
  const elapsed = performance.now() - t0
  if (row.id !== id || row.status !== "running") throw new Error(`re-open returned ${row.id} ${row.status}`)
  return elapsed
}

const prboxRestart = async (engine: Engine, recorder: Recorder, sandboxId: SandboxId): Promise<PrboxRun> => {
  const { sandboxes, run } = engine
  const t0 = performance.now()
  const stopped = await run(sandboxes.stop(sandboxId))
  const tStop = performance.now()
  if (stopped.status !== "stopped") throw new Error(`stop ended ${stopped.status}`)
  await run(sandboxes.restart(sandboxId))
  await run(sandboxes.awaitIdle(sandboxId))
  const row = await run(sandboxes.get(sandboxId))
  const t1 = performance.now()
  if (row.status !== "running") throw new Error(`restart ended ${row.status}: ${row.error ?? ""}`)
  const spans = windowOf(recorder, t0, t1)
  return {
    ms: t1 - t0,
    spans,
    probes: spans.filter((s) => s.op === "health.probe").length,
    id: sandboxId,
    t0,
    t1,
    tStop
  }
}

// --- profiles -----------------------------------------------------------------

type Phases = Record<string, number>

/** Work an open does beside the checkout: shown, but not part of the total's phases. */
const ALONGSIDE = "  (beside the checkout) "

/**
 * Splits a prbox open into contiguous phases (they add up to its total).
 * An image's sandbox gets its image and its container, started, while the
 * checkout runs: those show as `ALONGSIDE` rows, and the path waits on them
 * only for what outlasts the checkout.
 */
const openPhases = (run: PrboxRun): Phases => {
  const first = (op: string) => run.spans.find((s) => s.op === op)
  const fetch = first("workspaces.fetchPullRequest")
  const workspace = first("workspaces.createWorkspace")
  const image = first("runtime.ensureImage")
  const provision = first("runtime.provision")
  const start = first("runtime.start")
  const probes = run.spans.filter((s) => s.op === "health.probe")
  const firstProbe = probes.at(0)
  const health = probes.at(-1)
  if (!fetch || !workspace || !image || !provision || !start || !firstProbe || !health) return {}
  const within = (op: string, span: { readonly start: number; readonly end: number }) =>
    run.spans.filter((s) => s.op === op && s.start >= span.start && s.end <= span.end)
  // A cold mirror is a `git clone` too: each git span counts in the phase it ran in.
  const git = (op: string, span: { readonly start: number; readonly end: number }) =>
    within(op, span).reduce((sum, s) => sum + (s.end - s.start), 0)
  const mirrorGit = git("git.clone", fetch) + git("git.fetch", fetch)
  const clone = git("git.clone", workspace)
  const checkout = within("git.checkout", workspace).at(0)
  const checkoutMs = checkout === undefined ? 0 : checkout.end - checkout.start
  const beside = checkout !== undefined && start.end <= workspace.end
  const waited = beside ? Math.max(0, start.end - checkout.end) : 0
  const common = {
    "admission: permit, PR reconcile, row insert": fetch.start - run.t0,
    "mirror: git clone of the remote (cold), git fetch of the PR ref": mirrorGit,
    "mirror: other (rev-parse, files)": fetch.end - fetch.start - mirrorGit,
    "workspace: git clone --local": clone,
    "workspace: git checkout": checkoutMs,
    "workspace: the container started beside it, past the checkout": waited,
    "workspace: other (origin in .git/config)": workspace.end - workspace.start - clone - checkoutMs - waited
  }
  const readyWrite = { "ready: running write, awaitIdle": run.t1 - health.end }
  if (beside) {
    return {
      ...common,
      "status writes, devcontainer.json lookup": workspace.start - fetch.end,
      "image check": 0,
      "permits, sandbox home": 0,
      "docker create": 0,
      "docker start + inspect": 0,
      "status writes, hand-over after the checkout": firstProbe.start - workspace.end,
      [HEALTH_WAIT]: health.end - firstProbe.start,
      ...readyWrite,
      [`${ALONGSIDE}image check`]: image.end - image.start,
      [`${ALONGSIDE}docker create`]: provision.end - provision.start,
      [`${ALONGSIDE}docker start + inspect`]: start.end - start.start
    }
  }
  return {
    ...common,
    "status writes, devcontainer.json lookup":
      workspace.start - fetch.end + (image.start - workspace.end) + (start.start - provision.end),
    "image check": image.end - image.start,
    "permits, sandbox home": provision.start - image.end,
    "docker create": provision.end - provision.start,
    "docker start + inspect": start.end - start.start,
    [HEALTH_WAIT]: health.end - start.end,
    ...readyWrite
  }
}

/** How many git processes an open ran. */
const gitProcesses = (run: PrboxRun): number => run.spans.filter((s) => s.op.startsWith("git")).length

const restartPhases = (run: PrboxRun): Phases => {
  const stop = run.spans.find((s) => s.op === "runtime.stop")
  const start = run.spans.find((s) => s.op === "runtime.start")
  const health = run.spans.filter((s) => s.op === "health.probe").at(-1)
  if (!stop || !start || !health || run.tStop === undefined) return {}
  return {
    "stop: docker stop": stop.end - stop.start,
    "stop: engine (permits, status writes)": run.tStop - run.t0 - (stop.end - stop.start),
    "restart admission (+ inspect)": start.start - run.tStop,
    "docker start + inspect": start.end - start.start,
    [HEALTH_WAIT]: health.end - start.end,
    "ready: running write, awaitIdle": run.t1 - health.end
  }
}

/** prbox phases with a raw counterpart (clone/fetch, checkout, docker create+start, health). */
const SHARED_PHASES = new Set([
  "mirror: git clone of the remote (cold), git fetch of the PR ref",
  "workspace: git checkout",
  // The container's start, past the checkout it ran beside.
  "workspace: the container started beside it, past the checkout",
  "docker create",
  "docker start + inspect",
  HEALTH_WAIT
])

const rawPhases = (run: Measured): Phases => Object.fromEntries(run.spans.map((s) => [s.op, s.end - s.start]))

const medianPhases = (all: ReadonlyArray<Phases>): Phases => {
  const keys = [...new Set(all.flatMap((p) => Object.keys(p)))]
  return Object.fromEntries(keys.map((key) => [key, round(median(all.map((p) => p[key] ?? 0)), 1)]))
}

// --- the benchmark ------------------------------------------------------------

interface Samples {
  rawCold: Array<RawRun>
  cold: Array<PrboxRun>
  rawWarm: Array<RawRun>
  warm: Array<PrboxRun>
  reopen: Array<number>
  rawRestart: Array<Measured>
  restart: Array<PrboxRun>
}

export const runOpen = async (options: OpenOptions): Promise<void> => {
  const maxRuns = Math.floor(DEFAULT_REPO.pullRequests / 2) - 1
  if (options.runs < 5 || options.runs > maxRuns) throw new Error(`--runs must be between 5 and ${maxRuns}`)
  const facts = machineFacts()
  const image = await resolveImage(options.image)
  const repo = await benchRepo(DEFAULT_REPO, log)
  const remote = repo.path
  const root = makeRoot("open")
  const samples: Samples = { rawCold: [], cold: [], rawWarm: [], warm: [], reopen: [], rawRestart: [], restart: [] }
  const startedAt = performance.now()
  try {
    // The raw warm baseline's mirror: main's history, as a developer's existing clone would have it.
    const mirror = join(root, "raw-mirror.git")
    await sh("git", ["clone", "--quiet", "--bare", "--no-local", remote, mirror])
    for (let i = 0; i <= options.runs; i++) {
      const warmUp = i === 0
      const coldPr = 2 * i + 1
      const warmPr = 2 * i + 2
      const home = join(root, `home-${i}`)
      mkdirSync(home, { mode: 0o700 })
      const recorder: Recorder = []
      const engine = await makeEngine({ home, image: image.tag, recorder })
      const rawContainers: Array<string> = []
      try {
        // Alternate who goes first, so slow drift (page cache, Docker) does not favour one side.
        const pair = async <A, B>(raw: () => Promise<A>, prbox: () => Promise<B>): Promise<[A, B]> => {
          if (i % 2 === 0) {
            const a = await raw()
            return [a, await prbox()]
          }
          const b = await prbox()
          return [await raw(), b]
        }
        const [rawCold, cold] = await pair(
          () =>
            rawOpen(
              root,
              image.tag,
              join(root, `raw-cold-${i}`),
              ["clone", "--quiet", "--no-local", "--no-checkout", remote],
              remote,
              "origin",
              coldPr
            ),
          () => prboxOpen(engine, recorder, remote, coldPr)
        )
        rawContainers.push(rawCold.containerId)
        removeContainers([rawCold.containerId])
        const [rawWarm, warm] = await pair(
          () =>
            rawOpen(
              root,
              image.tag,
              join(root, `raw-warm-${i}`),
              ["clone", "--quiet", "--local", "--no-checkout", mirror],
              remote,
              remote,
              warmPr
            ),
          () => prboxOpen(engine, recorder, remote, warmPr)
        )
        rawContainers.push(rawWarm.containerId)
        const reopens: Array<number> = []
        for (let k = 0; k < REOPENS_PER_RUN; k++) reopens.push(await prboxReopen(engine, remote, warmPr, warm.id))
        const [rawRestarted, restarted] = await pair(
          () => rawRestart(rawWarm.containerId),
          () => prboxRestart(engine, recorder, warm.id)
        )
        log(
          `${warmUp ? "warm-up" : `run ${i}/${options.runs}`}: raw cold ${ms(rawCold.ms)}, cold ${ms(cold.ms)}, ` +
            `raw warm ${ms(rawWarm.ms)}, warm ${ms(warm.ms)}, re-open ${ms(median(reopens))}, ` +
            `raw restart ${ms(rawRestarted.ms)}, restart ${ms(restarted.ms)}`
        )
        if (!warmUp) {
          samples.rawCold.push(rawCold)
          samples.cold.push(cold)
          samples.rawWarm.push(rawWarm)
          samples.warm.push(warm)
          samples.reopen.push(...reopens)
          samples.rawRestart.push(rawRestarted)
          samples.restart.push(restarted)
        }
      } finally {
        await engine.dispose()
        removeContainers([...rawContainers, ...containersUnder(home)])
        for (const dir of [home, join(root, `raw-cold-${i}`), join(root, `raw-warm-${i}`)]) {
          rmSync(dir, { recursive: true, force: true })
        }
      }
    }
  } finally {
    const removed = cleanupRoot(root)
    log(`removed ${removed} leftover container(s) and ${root}`)
  }
  report(options, facts, image, repo, samples, performance.now() - startedAt)
}

const report = (
  options: OpenOptions,
  facts: ReturnType<typeof machineFacts>,
  image: { tag: string; label: string },
  repo: Awaited<ReturnType<typeof benchRepo>>,
  samples: Samples,
  wallMs: number
): void => {
  const m = (runs: ReadonlyArray<Measured>) => median(runs.map((r) => r.ms))
  const rawColdMs = m(samples.rawCold)
  const coldMs = m(samples.cold)
  const rawWarmMs = m(samples.rawWarm)
  const warmMs = m(samples.warm)
  const reopenMs = median(samples.reopen)
  const rawRestartMs = m(samples.rawRestart)
  const restartMs = m(samples.restart)
  const coldRatio = coldMs / rawColdMs
  const warmRatio = warmMs / rawWarmMs
  const restartRatio = restartMs / rawRestartMs
  // Each run's prbox and raw measurements ran back to back: their ratio is steadier on a busy machine.
  const paired = (prbox: ReadonlyArray<Measured>, raw: ReadonlyArray<Measured>) =>
    median(prbox.map((p, i) => p.ms / (raw[i]?.ms ?? Number.NaN)))
  const coldPaired = paired(samples.cold, samples.rawCold)
  const warmPaired = paired(samples.warm, samples.rawWarm)
  const restartPaired = paired(samples.restart, samples.rawRestart)
  const spread = (values: ReadonlyArray<number>) => [ms(Math.min(...values)), ms(Math.max(...values))]
  const row = (name: string, values: ReadonlyArray<number>, what: string) => [
    name,
    ms(median(values)),
    ...spread(values),
    String(values.length),
    what
  ]
  const out: Array<string> = []
  out.push("", "prbox bench open")
  out.push(describeMachine(facts))
  out.push(
    `image: ${image.tag} — ${image.label}${options.image === "healthz" ? " (the default, --image code-server, is the real one)" : ""}`
  )
  out.push(
    `repository: GENERATED (no public repository is reachable here): ${repo.commits} commits on main, ` +
      `${repo.pullRequests} refs/pull/N/head, pack ${(repo.packBytes / 2 ** 20).toFixed(1)} MiB, ` +
      `seed ${repo.parameters.seed}, ${repo.builtNow ? `generated now in ${Math.round(repo.buildMs / 1000)} s` : "cached"} (${repo.path})`
  )
  out.push(`runs: ${options.runs} (+1 warm-up, discarded); raw polls /healthz every ${RAW_POLL_MS} ms`, "")
  out.push(
    table(
      ["measurement", "median", "min", "max", "n", "what"],
      [
        row(
          "raw cold",
          samples.rawCold.map((r) => r.ms),
          "git clone --no-local + fetch PR ref + checkout + docker run + healthz"
        ),
        row(
          "prbox cold open",
          samples.cold.map((r) => r.ms),
          "open in a fresh PRBOX_HOME (no mirror) until running"
        ),
        row(
          "raw warm",
          samples.rawWarm.map((r) => r.ms),
          "git clone --local from a mirror + fetch PR ref + checkout + docker run + healthz"
        ),
        row(
          "prbox warm open",
          samples.warm.map((r) => r.ms),
          "open of a second PR of the repository (mirror exists)"
        ),
        row("prbox re-open", samples.reopen, "open of the running PR, call to return"),
        row(
          "raw restart",
          samples.rawRestart.map((r) => r.ms),
          "docker stop + docker start + healthz"
        ),
        row(
          "prbox restart",
          samples.restart.map((r) => r.ms),
          "stop, then restart until running"
        )
      ]
    )
  )
  out.push("")
  out.push(
    table(
      ["ratio of medians", "measured", "target", "", "paired (median of per-run ratios)"],
      [
        [
          "cold / raw cold",
          `${coldRatio.toFixed(2)}x`,
          `≤ ${TARGETS.coldRatio.toFixed(2)}x`,
          check(coldRatio <= TARGETS.coldRatio),
          `${coldPaired.toFixed(2)}x`
        ],
        [
          "warm / raw warm",
          `${warmRatio.toFixed(2)}x`,
          `≤ ${TARGETS.warmRatio.toFixed(2)}x`,
          check(warmRatio <= TARGETS.warmRatio),
          `${warmPaired.toFixed(2)}x`
        ],
        ["re-open", ms(reopenMs), `≤ ${TARGETS.reopenMs} ms`, check(reopenMs <= TARGETS.reopenMs), ""],
        ["restart / raw restart", `${restartRatio.toFixed(2)}x`, "—", "", `${restartPaired.toFixed(2)}x`]
      ]
    )
  )
  const prboxProfile = {
    cold: medianPhases(samples.cold.map(openPhases)),
    warm: medianPhases(samples.warm.map(openPhases)),
    restart: medianPhases(samples.restart.map(restartPhases))
  }
  const rawProfile = {
    cold: medianPhases(samples.rawCold.map(rawPhases)),
    warm: medianPhases(samples.rawWarm.map(rawPhases)),
    restart: medianPhases(samples.rawRestart.map(rawPhases))
  }
  const probes = (runs: ReadonlyArray<Measured>) => median(runs.map((r) => r.probes))
  out.push(
    "",
    "where the time goes (median ms per phase; phases add up to the total, rows in parentheses ran beside the checkout)"
  )
  const phaseRows = Object.keys(prboxProfile.cold).map((key) => [
    key,
    ms(prboxProfile.cold[key] ?? Number.NaN),
    ms(prboxProfile.warm[key] ?? Number.NaN)
  ])
  // Steps the raw path has no counterpart for (the mirror's own clone is one for a cold open only).
  const prboxOnly = (phases: Phases, cold: boolean) =>
    Object.entries(phases)
      .filter(
        ([key]) =>
          !SHARED_PHASES.has(key) && !key.startsWith(ALONGSIDE) && (cold || key !== "workspace: git clone --local")
      )
      .reduce((sum, [, value]) => sum + value, 0)
  const coldOnly = median(samples.cold.map((run) => prboxOnly(openPhases(run), true)))
  const warmOnly = median(samples.warm.map((run) => prboxOnly(openPhases(run), false)))
  out.push(
    table(
      ["prbox open", "cold", "warm"],
      [
        ...phaseRows,
        ["health probes", String(probes(samples.cold)), String(probes(samples.warm))],
        [
          "git processes (raw: 3)",
          String(median(samples.cold.map(gitProcesses))),
          String(median(samples.warm.map(gitProcesses)))
        ],
        ["steps raw has no counterpart for (sum)", ms(coldOnly), ms(warmOnly)],
        [
          "  … as a share of the raw median",
          `${((coldOnly / rawColdMs) * 100).toFixed(1)}%`,
          `${((warmOnly / rawWarmMs) * 100).toFixed(1)}%`
        ]
      ]
    )
  )
  out.push("")
  const rawKeys = [...new Set([...Object.keys(rawProfile.cold), ...Object.keys(rawProfile.restart)])]
  out.push(
    table(
      ["raw", "cold", "warm", "restart"],
      [
        ...rawKeys.map((key) => [
          key,
          ms(rawProfile.cold[key] ?? Number.NaN),
          ms(rawProfile.warm[key] ?? Number.NaN),
          ms(rawProfile.restart[key] ?? Number.NaN)
        ]),
        [
          "health probes",
          String(probes(samples.rawCold)),
          String(probes(samples.rawWarm)),
          String(probes(samples.rawRestart))
        ]
      ]
    )
  )
  out.push("")
  out.push(
    table(
      ["prbox restart", "ms"],
      [
        ...Object.entries(prboxProfile.restart).map(([key, value]) => [key, ms(value)]),
        ["health probes", String(probes(samples.restart))]
      ]
    )
  )
  const result = {
    rawColdMs: round(rawColdMs),
    coldMs: round(coldMs),
    coldRatio: round(coldRatio, 3),
    rawWarmMs: round(rawWarmMs),
    warmMs: round(warmMs),
    warmRatio: round(warmRatio, 3),
    reopenMs: round(reopenMs, 2),
    rawRestartMs: round(rawRestartMs),
    restartMs: round(restartMs),
    restartRatio: round(restartRatio, 3),
    prboxOnlyMs: { cold: round(coldOnly), warm: round(warmOnly) },
    gitProcesses: {
      cold: median(samples.cold.map(gitProcesses)),
      warm: median(samples.warm.map(gitProcesses)),
      raw: 3
    },
    pairedRatios: { cold: round(coldPaired, 3), warm: round(warmPaired, 3), restart: round(restartPaired, 3) },
    targets: {
      coldRatio: { max: TARGETS.coldRatio, met: coldRatio <= TARGETS.coldRatio },
      warmRatio: { max: TARGETS.warmRatio, met: warmRatio <= TARGETS.warmRatio },
      reopenMs: { max: TARGETS.reopenMs, met: reopenMs <= TARGETS.reopenMs }
    },
    runs: options.runs,
    image: image.tag,
    imageKind: options.image,
    rawHealthPollMs: RAW_POLL_MS,
    repository: {
      generated: true,
      path: repo.path,
      parameters: repo.parameters,
      commits: repo.commits,
      pullRequests: repo.pullRequests,
      packBytes: repo.packBytes
    },
    machine: facts,
    profile: { prbox: prboxProfile, raw: rawProfile },
    perRun: samples.cold.map((_, i) => {
      const at = <A>(runs: ReadonlyArray<A>) => runs[i] as A
      const rounded = (phases: Phases) => Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, round(v)]))
      return {
        rawCold: rounded(rawPhases(at(samples.rawCold))),
        cold: rounded(openPhases(at(samples.cold))),
        rawWarm: rounded(rawPhases(at(samples.rawWarm))),
        warm: rounded(openPhases(at(samples.warm))),
        rawRestart: rounded(rawPhases(at(samples.rawRestart))),
        restart: rounded(restartPhases(at(samples.restart)))
      }
    }),
    samples: {
      rawColdMs: samples.rawCold.map((r) => round(r.ms)),
      coldMs: samples.cold.map((r) => round(r.ms)),
      rawWarmMs: samples.rawWarm.map((r) => round(r.ms)),
      warmMs: samples.warm.map((r) => round(r.ms)),
      reopenMs: samples.reopen.map((v) => round(v, 2)),
      rawRestartMs: samples.rawRestart.map((r) => round(r.ms)),
      restartMs: samples.restart.map((r) => round(r.ms))
    },
    wallSeconds: round(wallMs / 1000)
  }
  const file = writeResult("open", result)
  out.push(
    "",
    `load average at the end: ${loadavg()
      .map((v) => v.toFixed(1))
      .join(" ")} (${facts.cores} cores)`
  )
  out.push(`wrote ${file} (wall time ${Math.round(wallMs / 1000)} s)`)
  process.stdout.write(`${out.join("\n")}\n`)
}
