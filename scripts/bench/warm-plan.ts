// The pure parts of `pnpm bench warm`: which pull requests it opens, its
// percentiles, and its targets judged (tested in test/WarmPlan.test.ts).
import { median } from "./common.ts"
import { percentile } from "./load.ts"

/** A `refs/pull/N/head` of the bench's repository, as it stands against the base branch. */
export interface PullRequestCandidate {
  readonly number: number
  /** Commits on the PR not on the base. */
  readonly ahead: number
  /** Commits on the base not on the PR. */
  readonly behind: number
  /** True when the PR's tree has `.devcontainer/` or `.devcontainer.json`: another environment than the base's. */
  readonly ownEnvironment: boolean
  /** A file the PR adds or changes (the bench reads it in the opened workspace); null when it only deletes. */
  readonly changedFile: string | null
}

/** A PR this far off its base brings in a large bundle, and measures that rather than the claim. */
export const PR_LIMITS = { ahead: 10, behind: 200 } as const

export interface PullRequestPlan {
  /** The repository's own PRs to open, newest first. */
  readonly use: ReadonlyArray<number>
  /** PR numbers the bench makes itself (a commit on the base each), past the highest one there is. */
  readonly make: ReadonlyArray<number>
}

/**
 * `count` PRs that share the base's environment, sit near it and add or
 * change a file, newest first; what the repository lacks the bench makes,
 * numbered after `highest`, the highest PR number it has.
 */
export const planPullRequests = (
  candidates: ReadonlyArray<PullRequestCandidate>,
  count: number,
  highest: number
): PullRequestPlan => {
  const use = candidates
    .filter(
      (c) =>
        !c.ownEnvironment &&
        c.changedFile !== null &&
        c.ahead >= 1 &&
        c.ahead <= PR_LIMITS.ahead &&
        c.behind <= PR_LIMITS.behind
    )
    .map((c) => c.number)
    .sort((a, b) => b - a)
    .slice(0, count)
  const make = Array.from({ length: count - use.length }, (_, i) => highest + 1 + i)
  return { use, make }
}

export interface Distribution {
  readonly p50: number
  readonly p95: number
  readonly min: number
  readonly max: number
  readonly n: number
}

/** Nearest-rank p50 and p95 (of 10 samples, p95 is the largest), min, max. */
export const distribution = (values: ReadonlyArray<number>): Distribution => {
  const sorted = Float64Array.from(values).sort()
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    n: sorted.length
  }
}

/** The issue's targets: ratios of a prbox p50 to the raw warm steps' p50 of the same run, and the daemon's RSS. */
export const TARGETS = { poolHit: 0.5, poolMiss: 1.0, prebuilt: 1.2, rssMb: 80 } as const

export type Scenario = "poolHit" | "poolMiss" | "prebuilt"

/** One scenario's timed opens beside the raw warm steps run alternately with them. */
export interface ScenarioSamples {
  readonly prboxMs: ReadonlyArray<number>
  readonly rawMs: ReadonlyArray<number>
}

export interface Judged {
  readonly prbox: Distribution
  readonly raw: Distribution
  /** prbox p50 / raw p50. */
  readonly ratio: number
  /** The median of each pair's ratio (prbox and raw ran back to back): steadier on a busy machine. */
  readonly pairedRatio: number
  readonly target: number
  readonly met: boolean
}

export const judge = (scenario: Scenario, samples: ScenarioSamples): Judged => {
  const prbox = distribution(samples.prboxMs)
  const raw = distribution(samples.rawMs)
  const ratio = prbox.p50 / raw.p50
  const target = TARGETS[scenario]
  return {
    prbox,
    raw,
    ratio,
    pairedRatio: median(samples.prboxMs.map((value, i) => value / (samples.rawMs[i] ?? Number.NaN))),
    target,
    met: samples.prboxMs.length > 0 && samples.prboxMs.length === samples.rawMs.length && ratio <= target
  }
}

/** A pool's answer (`GET /v1/pool`) as the bench waits on it: refilled once `size` entries are ready and none is being made. */
export const poolRefilled = (entries: ReadonlyArray<{ readonly state: string }>, size: number): boolean =>
  entries.filter((e) => e.state === "ready").length >= size && entries.every((e) => e.state === "ready")

/** `docker stats`' memory column ("123.4MiB / 7.6GiB") in MiB; NaN when it reads otherwise. */
export const statsMemoryMb = (usage: string): number => {
  const match = /^\s*([\d.]+)\s*(B|KiB|MiB|GiB|kB|MB|GB)\b/.exec(usage)
  if (match === null) return Number.NaN
  const factor: Record<string, number> = {
    B: 1 / 2 ** 20,
    KiB: 1 / 1024,
    MiB: 1,
    GiB: 1024,
    kB: 1000 / 2 ** 20,
    MB: 1e6 / 2 ** 20,
    GB: 1e9 / 2 ** 20
  }
  return Number(match[1]) * (factor[match[2] ?? ""] ?? Number.NaN)
}

/** The sandbox id `prbox open --json` printed (its view's `id`), or the human line's ("sandbox <id> is running"). */
export const openedId = (stdout: string): string => {
  const text = stdout.trim()
  for (const candidate of [text, text.split("\n").at(-1) ?? ""]) {
    try {
      const view: unknown = JSON.parse(candidate)
      if (typeof view === "object" && view !== null && "id" in view && typeof view.id === "string") return view.id
    } catch {
      // not JSON: the human line below
    }
  }
  const id = /^sandbox (\S+) is running/m.exec(text)?.[1]
  if (id === undefined) throw new Error(`prbox open printed no sandbox id: ${text.slice(0, 300)}`)
  return id
}
