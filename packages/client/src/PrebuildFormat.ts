import type { PrebuildStatus, PrebuildView } from "@prbox/protocol"
import { age, displayText } from "./Format.ts"

const MIB = 1024 ** 2
const GIB = 1024 ** 3

/** `512 MiB`, `1.5 GiB`. */
export const sizeText = (bytes: number): string =>
  bytes >= GIB ? `${(bytes / GIB).toFixed(1)} GiB` : `${Math.ceil(bytes / MIB)} MiB`

/** `prbox doctor`'s line: how many are ready, being made and failed, and the disk they use of the cap; or "off". */
export const prebuildSummary = (status: PrebuildStatus): string => {
  if (!status.enabled || status.capBytes === null) return 'off ("prebuilds": false in config.json)'
  const count = (state: PrebuildView["state"]) => status.prebuilds.filter((row) => row.state === state).length
  return `${count("ready")} ready, ${count("making")} making, ${count("failed")} failed; ${sizeText(status.usedBytes)} of ${sizeText(status.capBytes)}`
}

export const PREBUILDS_HEADER = ["REPOSITORY", "BASE", "STATE", "SIZE", "MADE", "USED", "KEY"] as const

/** One row a prebuild, newest first as the daemon lists them; a failed one's reason is its state's. */
export const prebuildRows = (status: PrebuildStatus, now: number): ReadonlyArray<ReadonlyArray<string>> =>
  status.prebuilds.map((row) => [
    `${row.host}/${row.repository}`,
    `${displayText(row.baseBranch)}@${row.baseCommit.slice(0, 7)}`,
    row.state === "failed" && row.reason !== null
      ? `failed: ${displayText(row.reason)}`
      : row.spare === true
        ? `${row.state}, spare`
        : row.state,
    row.sizeBytes === null ? "-" : sizeText(row.sizeBytes),
    `${age(row.readyAt ?? row.startedAt, now)} ago`,
    row.usedAt === null ? "never" : `${age(row.usedAt, now)} ago`,
    row.key.slice(0, 12)
  ])
