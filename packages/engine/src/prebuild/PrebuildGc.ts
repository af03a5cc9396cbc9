import type { Prebuild } from "@prbox/domain"

export interface PrebuildGcPolicy {
  /** config.json's `prebuilds.maxGiB`, in bytes. */
  readonly maxBytes: number
  /** config.json's `prebuilds.keepDays`, in ms: kept this long since last used (or made). */
  readonly keepMs: number
}

export interface PrebuildRemoval {
  readonly id: string
  readonly reason: string
}

const lastUse = (row: Prebuild) => row.usedAt ?? row.readyAt ?? row.startedAt

/**
 * Which prebuilds gc removes: never one being made or in use (an open
 * copying from it); a failed one past keepDays; a ready one replaced by a
 * newer ready one of its key, or unused for keepDays; then, over the disk
 * cap, the least recently used first until the rest fits. Prebuilds off
 * (`policy` undefined): every one not in use.
 */
export const planPrebuildGc = (
  rows: ReadonlyArray<Prebuild>,
  inUse: ReadonlySet<string>,
  now: number,
  policy: PrebuildGcPolicy | undefined
): ReadonlyArray<PrebuildRemoval> => {
  const removable = rows.filter((row) => row.state !== "making" && !inUse.has(row.id))
  if (policy === undefined) return removable.map((row) => ({ id: row.id, reason: "prebuilds are off" }))
  const removals: Array<PrebuildRemoval> = []
  const kept: Array<Prebuild> = []
  const newestReady = new Map<string, Prebuild>()
  for (const row of rows) {
    if (row.state !== "ready") continue
    const best = newestReady.get(row.key)
    if (best === undefined || (row.readyAt ?? 0) > (best.readyAt ?? 0)) newestReady.set(row.key, row)
  }
  for (const row of removable) {
    const idle = now - lastUse(row)
    if (idle >= policy.keepMs) removals.push({ id: row.id, reason: `unused for ${Math.floor(idle / 86_400_000)} days` })
    else if (row.state === "ready" && newestReady.get(row.key)?.id !== row.id) {
      removals.push({ id: row.id, reason: "replaced by a newer prebuild of its environment" })
    } else if (row.state === "ready") kept.push(row)
  }
  // What stays counts towards the cap, the ones that cannot go included.
  const fixed = rows
    .filter((row) => row.state === "making" || inUse.has(row.id))
    .reduce((sum, row) => sum + (row.sizeBytes ?? 0), 0)
  let total = fixed + kept.reduce((sum, row) => sum + (row.sizeBytes ?? 0), 0)
  for (const row of [...kept].sort((a, b) => lastUse(a) - lastUse(b))) {
    if (total <= policy.maxBytes) break
    removals.push({ id: row.id, reason: "over the prebuilds' disk cap (maxGiB), least recently used first" })
    total -= row.sizeBytes ?? 0
  }
  return removals
}
