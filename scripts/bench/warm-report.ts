// `pnpm bench warm`'s tables and bench-results/warm.json.
import { loadavg } from "node:os"
import { check, describeMachine, type MachineFacts, median, ms, round, table, writeResult } from "./common.ts"
import type { ContainerUse, TimedOpen } from "./warm-open.ts"
import { type Distribution, judge, type Scenario, TARGETS } from "./warm-plan.ts"
import type { WarmRepo } from "./warm-repo.ts"

export interface WarmRun {
  readonly opens: ReadonlyArray<TimedOpen>
  readonly rawMs: ReadonlyArray<number>
}

export interface WarmFigures {
  readonly source: string
  readonly repo: WarmRepo
  readonly prebuiltRepo: WarmRepo & { readonly lockHash: string }
  readonly poolSize: number
  readonly poolHit: WarmRun
  readonly poolMiss: WarmRun
  readonly prebuilt: WarmRun
  readonly memory: {
    /** The daemon's VmRSS, idle with the pool full, after a restart (compile cache filled). */
    readonly idleMb: number
    /** The same before the restart: the daemon that made the pool and served the opens. */
    readonly afterOpensMb: number
    readonly poolEntries: number
    readonly poolContainers: ReadonlyArray<ContainerUse>
  }
  readonly version: string
}

const SCENARIOS: ReadonlyArray<{ readonly key: Scenario; readonly name: string; readonly what: string }> = [
  { key: "poolHit", name: "pool hit", what: "a started pool container claimed" },
  { key: "poolMiss", name: "pool miss", what: "warmPool.size 0: today's path" },
  {
    key: "prebuilt",
    name: "prebuilt",
    what: "from the prebuild (its spare made); updateContentCommand finds its stamp"
  }
]

const phasesOf = (run: WarmRun) => {
  const phase = (name: keyof TimedOpen["phases"]) => round(median(run.opens.map((o) => o.phases[name])), 1)
  return { process: phase("process"), health: phase("health"), login: phase("login"), file: phase("file") }
}

const distRow = (name: string, d: Distribution, what: string) => [
  name,
  ms(d.p50),
  ms(d.p95),
  ms(d.min),
  ms(d.max),
  String(d.n),
  what
]

const rounded = (d: Distribution) => ({
  p50: round(d.p50),
  p95: round(d.p95),
  min: round(d.min),
  max: round(d.max),
  n: d.n
})

export const reportWarm = (
  options: { readonly runs: number; readonly repo: string | undefined },
  facts: MachineFacts,
  image: string,
  figures: WarmFigures | undefined,
  wallMs: number
): void => {
  if (figures === undefined) return
  const results = SCENARIOS.map((s) => {
    const run = figures[s.key]
    return { ...s, run, judged: judge(s.key, { prboxMs: run.opens.map((o) => o.ms), rawMs: run.rawMs }) }
  })
  const { memory } = figures
  const rssMet = memory.idleMb <= TARGETS.rssMb && memory.poolEntries === figures.poolSize
  const loadEnd = loadavg().map((v) => round(v, 2))
  const out: Array<string> = ["", "prbox bench warm", describeMachine(facts)]
  out.push(`load average at the end: ${loadEnd.join(" ")} (${facts.cores} cores)`)
  out.push(
    `prbox ${figures.version}, installed from the package's tarball; image ${image} (prbox's default) with prbox's code-server mounted`
  )
  out.push(
    `repository: a bare copy of ${figures.source}${options.repo === undefined ? " (GENERATED stand-in: pass --repo for a real one)" : ""}, ` +
      "as it is (no devcontainer.json: the default image, no create-time steps); " +
      `PRs ${figures.repo.pullRequests.map((p) => `${p.number}${p.made ? "*" : ""}`).join(" ")} (* made by the bench)`
  )
  out.push(
    `prebuilt repository: its base plus .devcontainer/devcontainer.json (updateContentCommand sleeps 30 s unless ` +
      `deps.lock's hash is its stamp) and deps.lock; PRs 1-${figures.prebuiltRepo.pullRequests.length} made by the bench`
  )
  out.push(
    `each timed open: \`prbox open <repo> --pr N --json\` as a whole process, then /healthz, GET …/password and POST /login ` +
      `(302 with the cookie), and the PR's file read in the workspace; ${options.runs} runs + 1 warm-up per scenario, ` +
      "raw and prbox alternating who goes first; raw warm: git clone --local of a bare clone + fetch of the PR ref + checkout + docker run + /healthz",
    ""
  )
  out.push(
    table(
      ["measurement", "p50", "p95", "min", "max", "n", "what"],
      results.flatMap((r) => [
        distRow(`raw warm (${r.name} run)`, r.judged.raw, "by hand, beside each open"),
        distRow(`prbox open, ${r.name}`, r.judged.prbox, r.what)
      ])
    ),
    ""
  )
  out.push(
    table(
      ["ratio of p50s", "measured", "target", "", "paired (median of per-run ratios)"],
      [
        ...results.map((r) => [
          `${r.name} / raw warm`,
          `${r.judged.ratio.toFixed(2)}x`,
          `≤ ${r.judged.target.toFixed(2)}x`,
          check(r.judged.met),
          `${r.judged.pairedRatio.toFixed(2)}x`
        ]),
        [
          `daemon idle RSS, pool of ${memory.poolEntries} ready`,
          `${round(memory.idleMb)} MiB`,
          `≤ ${TARGETS.rssMb} MiB`,
          check(rssMet),
          `${round(memory.afterOpensMb)} MiB before its restart`
        ]
      ]
    ),
    ""
  )
  out.push(
    table(
      ["prbox open (median ms)", ...results.map((r) => r.name)],
      (["process", "health", "login", "file"] as const).map((phase) => [
        {
          process: "prbox open process, spawn to exit",
          health: "GET the row, /healthz",
          login: "GET …/password, POST /login",
          file: "the PR's file read"
        }[phase],
        ...results.map((r) => ms(phasesOf(r.run)[phase]))
      ])
    ),
    ""
  )
  const pool = memory.poolContainers
  out.push(
    `pool containers at idle (docker stats, one sample): ${pool.map((c) => `${round(c.memMb)} MiB, ${c.cpuPercent.toFixed(1)}% CPU`).join("; ") || "none"}`
  )
  const met = results.every((r) => r.judged.met) && rssMet
  const file = writeResult("warm", {
    met,
    targets: TARGETS,
    scenarios: Object.fromEntries(
      results.map((r) => [
        r.key,
        {
          prbox: rounded(r.judged.prbox),
          raw: rounded(r.judged.raw),
          ratio: round(r.judged.ratio, 3),
          pairedRatio: round(r.judged.pairedRatio, 3),
          target: r.judged.target,
          met: r.judged.met,
          phasesMs: phasesOf(r.run),
          samples: { prboxMs: r.run.opens.map((o) => round(o.ms)), rawMs: r.run.rawMs.map((v) => round(v)) }
        }
      ])
    ),
    memory: {
      idleRssMb: round(memory.idleMb),
      afterOpensRssMb: round(memory.afterOpensMb),
      poolReady: memory.poolEntries,
      target: TARGETS.rssMb,
      met: rssMet,
      poolContainers: pool.map((c) => ({ memMb: round(c.memMb), cpuPercent: round(c.cpuPercent, 2) }))
    },
    runs: options.runs,
    poolSize: figures.poolSize,
    image,
    version: figures.version,
    repository: {
      source: figures.source,
      generated: options.repo === undefined,
      baseBranch: figures.repo.baseBranch,
      pullRequests: figures.repo.pullRequests.map((p) => ({ number: p.number, head: p.head, made: p.made })),
      prebuiltPullRequests: figures.prebuiltRepo.pullRequests.length
    },
    machine: facts,
    loadAverageAtEnd: loadEnd,
    wallSeconds: round(wallMs / 1000)
  })
  out.push("", `wrote ${file} (wall time ${Math.round(wallMs / 1000)} s)`)
  process.stdout.write(`${out.join("\n")}\n`)
}
