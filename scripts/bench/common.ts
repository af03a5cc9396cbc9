import { execFile, execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { cpus, loadavg, release, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { PREBUILD_HOME_LABEL, PREBUILD_IMAGE_LABELS } from "@prbox/engine"
import { BENCH_LABEL } from "./engine.ts"

export const repoRoot = join(import.meta.dirname, "..", "..")

const execFileAsync = promisify(execFile)

/** Runs a command, resolving with its trimmed stdout; a failure names the command and its stderr. */
export const sh = async (file: string, args: ReadonlyArray<string>, cwd?: string): Promise<string> => {
  try {
    const { stdout } = await execFileAsync(file, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, cwd })
    return stdout.trim()
  } catch (error) {
    const stderr = (error as { readonly stderr?: string }).stderr?.trim() ?? ""
    throw new Error(`${file} ${args.join(" ")} failed: ${stderr || String(error)}`)
  }
}

export const shSync = (file: string, args: ReadonlyArray<string>): string =>
  execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const median = (values: ReadonlyArray<number>): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

export const round = (value: number, digits = 1): number => {
  const factor = 10 ** digits
  return Math.round(value * factor) / factor
}

export const ms = (value: number): string =>
  Number.isNaN(value) ? "—" : value >= 100 ? `${Math.round(value)} ms` : `${value.toFixed(1)} ms`

/** A plain-text table; numeric-looking cells are right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? "").length)))
  const isNumeric = (cell: string) => /^[-~≈<>≤=\d.,\s]+(ms|x|%|MiB)?$/.test(cell) || cell === "—"
  const format = (row: ReadonlyArray<string>) =>
    row
      .map((cell, i) => {
        const width = widths[i] ?? 0
        return i > 0 && isNumeric(cell) ? cell.padStart(width) : cell.padEnd(width)
      })
      .join("  ")
      .trimEnd()
  return [format(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(format)].join("\n")
}

export interface MachineFacts {
  readonly cores: number
  readonly cpu: string
  readonly memoryGiB: number
  readonly kernel: string
  readonly node: string
  readonly docker: string
  readonly dockerStorageDriver: string
  readonly git: string
  /** 1, 5 and 15 minute load averages when the run started: other work on the machine skews timings. */
  readonly loadAverage: ReadonlyArray<number>
}

export const machineFacts = (): MachineFacts => {
  const safe = (f: () => string): string => {
    try {
      return f()
    } catch {
      return "unknown"
    }
  }
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model.trim() ?? "unknown",
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    kernel: release(),
    node: process.version,
    docker: safe(() => shSync("docker", ["version", "--format", "{{.Server.Version}}"])),
    dockerStorageDriver: safe(() => shSync("docker", ["info", "--format", "{{.Driver}}"])),
    git: safe(() => shSync("git", ["--version"]).replace(/^git version /, "")),
    loadAverage: loadavg().map((value) => round(value, 2))
  }
}

export const describeMachine = (facts: MachineFacts): string =>
  `machine: ${facts.cores} cores (${facts.cpu}), ${facts.memoryGiB} GiB, Linux ${facts.kernel}, ` +
  `Docker ${facts.docker} (${facts.dockerStorageDriver}), git ${facts.git}, Node ${facts.node}; ` +
  `load average ${facts.loadAverage.join(" ")}${(facts.loadAverage[0] ?? 0) > facts.cores / 2 ? " (busy machine: timings are noisy)" : ""}`

export const writeResult = (name: string, result: unknown): string => {
  const dir = join(repoRoot, "bench-results")
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${name}.json`)
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`)
  return file
}

export const check = (ok: boolean): string => (ok ? "✓" : "✗")

// --- temporary state and container clean-up -----------------------------------

const roots = new Set<string>()

/** A private temporary directory for one benchmark run; `cleanupRoot` undoes it. */
export const makeRoot = (name: string): string => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `prbox-bench-${name}-`)))
  roots.add(root)
  return root
}

const isUnder = (root: string) => (home: string | undefined) =>
  home !== undefined && (home === root || home.startsWith(`${root}/`))

/**
 * A kind's objects whose home (or prebuild's home) is under `root`: a
 * container by the bench's label; a volume by either home label (a daemon's
 * prebuild volumes carry its home, not the bench's label).
 */
const labelledUnder = (kind: "container" | "volume", root: string): Array<string> =>
  (kind === "container" ? [`label=${BENCH_LABEL}=1`] : ["label=dev.prbox.home", `label=${PREBUILD_HOME_LABEL}`])
    .flatMap((filter) =>
      shSync("docker", [
        kind,
        "ls",
        ...(kind === "container" ? ["-a", "--no-trunc"] : []),
        "--filter",
        filter,
        "--format",
        `{{.${kind === "container" ? "ID" : "Name"}}}\t{{.Label "dev.prbox.home"}}\t{{.Label "${PREBUILD_HOME_LABEL}"}}`
      ]).split("\n")
    )
    .filter((line) => line.length > 0)
    .map((line) => line.split("\t"))
    .filter(([, home, prebuildHome]) => isUnder(root)(home) || isUnder(root)(prebuildHome))
    .map(([id]) => id ?? "")
    .filter((id, index, all) => all.indexOf(id) === index)

/**
 * The benchmark containers whose `dev.prbox.home` is `root` or below it,
 * and the prebuild containers of a daemon whose home is (`dev.prbox.prebuild.home`).
 */
export const containersUnder = (root: string): Array<string> => labelledUnder("container", root)

/** Prebuild images (`dev.prbox.prebuild.image.home`) of a daemon whose home is under `root`. */
const prebuildImagesUnder = (root: string): Array<string> => {
  const ids = [
    ...new Set(
      shSync("docker", ["image", "ls", "-q", "--no-trunc", "--filter", `label=${PREBUILD_IMAGE_LABELS.home}`])
        .split("\n")
        .filter((line) => line.length > 0)
    )
  ]
  if (ids.length === 0) return []
  const homes = shSync("docker", [
    "image",
    "inspect",
    "--format",
    `{{index .Config.Labels "${PREBUILD_IMAGE_LABELS.home}"}}`,
    ...ids
  ]).split("\n")
  return ids.filter((_, i) => isUnder(root)(homes[i]))
}

export const removeContainers = (ids: ReadonlyArray<string>): void => {
  for (let i = 0; i < ids.length; i += 50) {
    execFileSync("docker", ["rm", "-f", "-v", ...ids.slice(i, i + 50)], { stdio: "ignore" })
  }
}

/**
 * Removes what daemons and the bench made under `root`: containers, then
 * their volumes (sandboxes' and prebuilds'), then prebuild images; returns
 * how many containers were removed.
 */
export const removeUnder = (root: string): number => {
  const left = containersUnder(root)
  if (left.length > 0) removeContainers(left)
  const still = containersUnder(root)
  if (still.length > 0) throw new Error(`could not remove containers ${still.join(", ")}`)
  const volumes = labelledUnder("volume", root)
  if (volumes.length > 0) execFileSync("docker", ["volume", "rm", "-f", ...volumes], { stdio: "ignore" })
  const images = prebuildImagesUnder(root)
  if (images.length > 0) execFileSync("docker", ["image", "rm", "-f", ...images], { stdio: "ignore" })
  return left.length
}

/** Removes every container of the run (and the volumes and images its daemons made) and its directory; returns how many containers were removed. */
export const cleanupRoot = (root: string): number => {
  const left = removeUnder(root)
  rmSync(root, { recursive: true, force: true })
  roots.delete(root)
  return left
}

/** Clean-up on Ctrl-C or kill: the run's containers and directories go too. */
export const cleanupAllRoots = (): void => {
  for (const root of [...roots]) {
    try {
      cleanupRoot(root)
    } catch (error) {
      process.stderr.write(`bench: clean-up of ${root} failed: ${String(error)}\n`)
    }
  }
}

/** A bench that cannot go on for a reason its message says in full: `pnpm bench` prints it without a stack. */
export class BenchStopped extends Error {}

export const log = (line: string): void => {
  process.stderr.write(`[bench] ${line}\n`)
}

// --- HTTP load (load.ts: no effect, so a load process stays small) ------------

export { type Answer, closedLoop, httpRequest, type LoadRun, percentile } from "./load.ts"
