import type { Prebuild } from "@prbox/domain"

/** A repository's prebuild is made again at most this often when its base moved. */
export const REFRESH_AFTER_MS = 60 * 60_000

/** What an open knows when it decides (pure: the rows and keys are read before). */
export interface PrebuildFacts {
  /** config.json's `prebuilds` is not `false`. */
  readonly enabled: boolean
  /** The PR's environment's key, or why it has none. */
  readonly prKey: string | { readonly unkeyable: string }
  /** The base branch's environment's key (what a background build makes), or why it has none. */
  readonly baseKey: string | { readonly unkeyable: string }
  /** The base branch's commit now (in the mirror). */
  readonly baseCommit: string
  /** Every prebuild row of the repository. */
  readonly rows: ReadonlyArray<Prebuild>
  readonly now: number
}

/** How the open goes: from a ready prebuild, today's full path (and why), or prebuilds are off. */
export type OpenPath =
  | { readonly _tag: "Prebuild"; readonly prebuild: Prebuild }
  | { readonly _tag: "Full"; readonly reason: string }
  | { readonly _tag: "Off" }

/** What is made in the background after the open: a first prebuild of the base's key, a refresh, or nothing. */
export type Background =
  | { readonly _tag: "Make"; readonly key: string }
  | { readonly _tag: "Refresh"; readonly key: string; readonly replaces: string }
  | { readonly _tag: "Nothing"; readonly reason: string }

export interface PrebuildDecision {
  readonly open: OpenPath
  readonly background: Background
}

const newest = (rows: ReadonlyArray<Prebuild>, at: (row: Prebuild) => number | null) =>
  rows.reduce<Prebuild | undefined>((best, row) => {
    const time = at(row)
    if (time === null) return best
    return best === undefined || time > (at(best) ?? -1) ? row : best
  }, undefined)

const short = (commit: string) => commit.slice(0, 7)

/** The open's path: a ready prebuild of the PR's own key, else why not. */
const openPath = (facts: PrebuildFacts): OpenPath => {
  const { prKey, baseKey } = facts
  if (typeof prKey !== "string") return { _tag: "Full", reason: prKey.unkeyable }
  const ready = newest(
    facts.rows.filter((row) => row.key === prKey && row.state === "ready"),
    (row) => row.readyAt
  )
  if (ready !== undefined) return { _tag: "Prebuild", prebuild: ready }
  if (typeof baseKey === "string" && baseKey !== prKey) {
    return { _tag: "Full", reason: "this PR changes its environment from its base branch's" }
  }
  return { _tag: "Full", reason: "no prebuild of this environment is ready yet" }
}

/**
 * The background's part, only when the PR's environment is its base's (the
 * build runs the base's commands on the base): one build of a repository at a time; a first one
 * when its base's key has none; a refresh when the base moved and the last
 * attempt started at least an hour ago; never again for a commit whose
 * build failed (a new base commit, or a new key, tries again).
 */
const background = (facts: PrebuildFacts): Background => {
  const { baseKey, baseCommit, rows, now } = facts
  if (typeof baseKey !== "string") return { _tag: "Nothing", reason: baseKey.unkeyable }
  // The open's own environment is what is made: only when it is the base's.
  if (facts.prKey !== baseKey) {
    return { _tag: "Nothing", reason: "this PR's environment is not its base's: a prebuild is made from the base's" }
  }
  if (rows.some((row) => row.state === "making")) {
    return { _tag: "Nothing", reason: "a prebuild of this repository is being made" }
  }
  const ofKey = rows.filter((row) => row.key === baseKey)
  const last = newest(ofKey, (row) => row.startedAt)
  const ready = newest(
    ofKey.filter((row) => row.state === "ready"),
    (row) => row.readyAt
  )
  if (last === undefined) return { _tag: "Make", key: baseKey }
  if (last.baseCommit === baseCommit) {
    return last.state === "failed"
      ? { _tag: "Nothing", reason: `the prebuild of ${short(baseCommit)} failed; the next base commit tries again` }
      : { _tag: "Nothing", reason: `the prebuild is at the base's ${short(baseCommit)}` }
  }
  if (ready?.baseCommit === baseCommit) {
    return { _tag: "Nothing", reason: `the prebuild is at the base's ${short(baseCommit)}` }
  }
  if (now - last.startedAt < REFRESH_AFTER_MS) {
    return { _tag: "Nothing", reason: "the base moved, but the last prebuild started less than an hour ago" }
  }
  return ready === undefined ? { _tag: "Make", key: baseKey } : { _tag: "Refresh", key: baseKey, replaces: ready.id }
}

/**
 * Whether an open starts from a prebuild, and what is made in the
 * background: nothing at all when prebuilds are off.
 */
export const decidePrebuild = (facts: PrebuildFacts): PrebuildDecision =>
  facts.enabled
    ? { open: openPath(facts), background: background(facts) }
    : { open: { _tag: "Off" }, background: { _tag: "Nothing", reason: "prebuilds are off (config.json)" } }

/** What `prbox prebuild` does now for a repository's base: its key and commit are read before. */
export type MakeNow =
  | { readonly _tag: "BeingMade"; readonly prebuild: Prebuild }
  | { readonly _tag: "UpToDate"; readonly prebuild: Prebuild }
  | { readonly _tag: "Make" }
  | { readonly _tag: "Refresh"; readonly replaces: Prebuild }

/**
 * An asked-for prebuild of the base (pure): one of the repository being
 * made is answered as such (one at a time); a ready one of the same key at
 * the same commit is up to date; a ready one of the key at another commit
 * is refreshed; else one is made (a failed commit is tried again: the user asked).
 */
export const decideMakeNow = (rows: ReadonlyArray<Prebuild>, key: string, baseCommit: string): MakeNow => {
  const making = rows.find((row) => row.state === "making")
  if (making !== undefined) return { _tag: "BeingMade", prebuild: making }
  const ready = newest(
    rows.filter((row) => row.key === key && row.state === "ready"),
    (row) => row.readyAt
  )
  if (ready === undefined) return { _tag: "Make" }
  return ready.baseCommit === baseCommit ? { _tag: "UpToDate", prebuild: ready } : { _tag: "Refresh", replaces: ready }
}
