import type { Prebuild } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Effect } from "effect"
import { Config } from "../Config.ts"
import { mapStoreErrors } from "../Errors.ts"
import { onDisk, PrebuildSpares } from "./PrebuildSpares.ts"

const GIB = 1024 ** 3

/** Whether prebuilds are on, their disk cap, what the ready ones hold (a spare counted), and each one, newest first. */
export interface PrebuildOverview {
  readonly enabled: boolean
  readonly capBytes: number | null
  readonly usedBytes: number
  readonly prebuilds: ReadonlyArray<Prebuild>
  /** The prebuilds with a spare ready (a copy of their files made ahead for the next open). */
  readonly spared: ReadonlySet<string>
}

/** Prebuilds as `prbox prebuild --status` and `prbox doctor` show them (config.json read afresh). */
export const prebuildStatus = Effect.fn("Prebuilds.status")(function* () {
  const config = yield* (yield* Config).load
  const rows = yield* (yield* PrebuildRepo).list.pipe(mapStoreErrors("prebuilds.list"))
  const prebuilds = [...rows].sort((a, b) => b.startedAt - a.startedAt)
  const spared = yield* (yield* PrebuildSpares).spared
  const usedBytes = prebuilds
    .filter((row) => row.state === "ready")
    .reduce((sum, row) => sum + (onDisk(row, spared) ?? 0), 0)
  return {
    enabled: config.prebuilds !== false,
    capBytes: config.prebuilds === false ? null : config.prebuilds.maxGiB * GIB,
    usedBytes,
    prebuilds,
    spared
  } satisfies PrebuildOverview
})
