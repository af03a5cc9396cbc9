import { execFile } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { seedRows } from "./api.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  httpRequest,
  log,
  machineFacts,
  makeRoot,
  median,
  ms,
  repoRoot,
  round,
  table,
  writeResult
} from "./common.ts"
import { type Daemon, spawnDaemon, waitForHealth } from "./daemon.ts"
import { BENCH_LABEL } from "./engine.ts"

export interface CliOptions {
  readonly runs: number
  /** A prbox to measure instead of the one installed from the package's tarball (e.g. scripts/prbox). */
  readonly prbox: string | undefined
}

const TARGETS = { ratio: 2, setupOverheadMs: 30 } as const
const WARMUP_RUNS = 3
const LIST_PATH = "/v1/sandboxes?all=true"

export interface Timed {
  readonly ms: number
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** One whole process, from spawn to exit: what a user waits for at the prompt. */
export const timed = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<Timed> =>
  new Promise((resolve) => {
    const started = performance.now()
    execFile(file, [...args], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
      resolve({ ms: performance.now() - started, code, stdout, stderr })
    })
  })

interface Contender {
  readonly name: string
  readonly file: string
  readonly args: ReadonlyArray<string>
  /** Throws when a run did not do the real work (a failure, an empty answer). */
  readonly verify: (run: Timed) => void
}

const succeeded =
  (expect: (stdout: string) => boolean, what: string) =>
  (run: Timed): void => {
    if (run.code !== 0 || !expect(run.stdout)) {
      throw new Error(`${what} exited ${run.code}: ${run.stderr.trim() || run.stdout.slice(0, 200)}`)
    }
  }

/**
 * Runs the contenders in turn, `runs` rounds after WARMUP_RUNS (Node's
 * compile cache, the page cache), so that load on the machine falls on all
 * of them alike; the median wall time of each.
 */
const alternate = async (
  contenders: ReadonlyArray<Contender>,
  runs: number,
  env: NodeJS.ProcessEnv
): Promise<ReadonlyArray<number>> => {
  const times = contenders.map((): Array<number> => [])
  for (let round = 0; round < WARMUP_RUNS + runs; round++) {
    for (const [index, contender] of contenders.entries()) {
      const run = await timed(contender.file, contender.args, env)
      contender.verify(run)
      if (round >= WARMUP_RUNS) times[index]?.push(run.ms)
    }
  }
  return times.map(median)
}

/** The daemon's answer to the list the fast path asks for: its size, and how long the socket round trip takes in-process. */
const listAnswer = async (socketPath: string, runs: number) => {
  const times: Array<number> = []
  let bytes = 0
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    const started = performance.now()
    const answer = await httpRequest({ socketPath, path: LIST_PATH })
    if (answer.status !== 200) throw new Error(`GET ${LIST_PATH} answered ${answer.status}`)
    if (i >= WARMUP_RUNS) times.push(performance.now() - started)
    bytes = answer.bytes
  }
  return { bytes, medianMs: median(times) }
}

export const runCli = async (options: CliOptions): Promise<void> => {
  if (options.runs < 1) throw new Error("--runs must be at least 1")
  const facts = machineFacts()
  const root = makeRoot("cli")
  const home = join(root, "home")
  mkdirSync(home, { mode: 0o700 })
  writeFileSync(join(home, "config.json"), JSON.stringify({ labels: { [BENCH_LABEL]: "1" } }))
  const socketPath = join(home, "run", "prboxd.sock")
  // The project's Node first: the installed bins run `node` from PATH.
  const env = {
    ...process.env,
    PRBOX_HOME: home,
    PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`
  }
  let daemon: Daemon | undefined
  try {
    log("seeding rows through the store ...")
    const rows = await seedRows(home)
    let prbox = options.prbox
    let version = "(not installed)"
    if (prbox === undefined) {
      log("installing the package from its tarball ...")
      const { installPackage } = await import("../package/install.ts")
      const installed = await installPackage(join(root, "prefix"))
      prbox = installed.prbox
      version = installed.version
    }
    log("starting prboxd ...")
    daemon = spawnDaemon(home)
    await waitForHealth(socketPath, daemon)
    const list = await listAnswer(socketPath, options.runs)
    const first = JSON.parse((await httpRequest({ socketPath, path: LIST_PATH }, true)).body) as Array<{ id: string }>
    const id = first[0]?.id
    if (id === undefined || first.length !== rows) throw new Error(`the daemon lists ${first.length} of ${rows} rows`)

    const docker: Contender = {
      name: "docker ps",
      file: "docker",
      args: ["ps"],
      verify: succeeded((out) => out.startsWith("CONTAINER ID"), "docker ps")
    }
    const node: Contender = {
      name: "node -e 0",
      file: process.execPath,
      args: ["-e", "0"],
      verify: succeeded(() => true, "node -e 0")
    }
    const commands: ReadonlyArray<Contender> = [
      {
        name: "prbox ls",
        file: prbox,
        args: ["ls"],
        verify: succeeded((out) => out.length > 0, "prbox ls")
      },
      {
        name: "prbox ls -a",
        file: prbox,
        args: ["ls", "-a"],
        verify: succeeded((out) => out.split("\n").length === rows + 2, "prbox ls -a")
      },
      {
        name: `prbox status ${id}`,
        file: prbox,
        args: ["status", id],
        verify: succeeded((out) => out.startsWith(`id:`), "prbox status")
      }
    ]
    log(`${options.runs} alternating runs of ${[docker, node, ...commands].map((c) => c.name).join(", ")} ...`)
    const [dockerMs = Number.NaN, nodeMs = Number.NaN, ...commandMs] = await alternate(
      [docker, node, ...commands],
      options.runs,
      env
    )

    // scripts/prbox's own cost: its set-up check, then the same CLI from sources.
    const script = join(repoRoot, "scripts", "prbox")
    const sources = join(repoRoot, "apps", "cli", "src", "main.ts")
    log("scripts/prbox against node apps/cli/src/main.ts ...")
    const [scriptMs = Number.NaN, sourcesMs = Number.NaN] = await alternate(
      [
        { name: "scripts/prbox ls", file: script, args: ["ls"], verify: succeeded(() => true, "scripts/prbox ls") },
        {
          name: "node apps/cli/src/main.ts ls",
          file: process.execPath,
          args: [sources, "ls"],
          verify: succeeded(() => true, "node apps/cli/src/main.ts ls")
        }
      ],
      options.runs,
      env
    )

    const results = commands.map((command, index) => {
      const medianMs = commandMs[index] ?? Number.NaN
      const ratio = medianMs / dockerMs
      return {
        command: command.name,
        medianMs: round(medianMs),
        ratio: round(ratio, 2),
        target: TARGETS.ratio,
        met: ratio <= TARGETS.ratio
      }
    })
    const setupOverheadMs = scriptMs - sourcesMs
    const setup = {
      scriptMedianMs: round(scriptMs),
      sourcesMedianMs: round(sourcesMs),
      overheadMs: round(setupOverheadMs),
      targetMs: TARGETS.setupOverheadMs,
      met: setupOverheadMs < TARGETS.setupOverheadMs
    }

    process.stdout.write(`${describeMachine(facts)}\n`)
    process.stdout.write(
      `prbox: ${prbox} (${version}); ${rows} rows; list answer ${Math.round(list.bytes / 1024)} KiB in ${ms(list.medianMs)} in-process; ${options.runs} runs, medians\n\n`
    )
    process.stdout.write(
      `${table(
        ["command", "median", "docker ps", "ratio", `≤ ${TARGETS.ratio}x`],
        [
          ...results.map((r) => [r.command, ms(r.medianMs), ms(dockerMs), `${r.ratio}x`, check(r.met)]),
          ["node -e 0 (bare Node start)", ms(nodeMs), ms(dockerMs), `${round(nodeMs / dockerMs, 2)}x`, ""]
        ]
      )}\n\n`
    )
    process.stdout.write(
      `scripts/prbox ls ${ms(scriptMs)} vs node apps/cli/src/main.ts ls ${ms(sourcesMs)}: set-up check ${ms(setupOverheadMs)} (< ${TARGETS.setupOverheadMs} ms ${check(setup.met)})\n`
    )
    const file = writeResult("cli", {
      machine: facts,
      prbox: { path: prbox, version },
      rows,
      runs: options.runs,
      listAnswer: { bytes: list.bytes, medianMs: round(list.medianMs, 2) },
      dockerPsMedianMs: round(dockerMs),
      nodeStartMedianMs: round(nodeMs),
      commands: results,
      scriptSetup: setup,
      met: results.every((r) => r.met) && setup.met
    })
    process.stdout.write(`\nwrote ${file}\n`)
  } finally {
    await daemon?.stop()
    cleanupRoot(root)
  }
}
