import { Schema } from "effect"
import type { SandboxId, Timestamp } from "./Ids.ts"

/**
 * `making`: its container is being made (or was, in a daemon that stopped:
 * reconcile removes it); `ready`: started, code-server up, claimable.
 * A claimed entry is no longer a pool entry: its row became the sandbox's.
 */
export const PoolState = Schema.Literals(["making", "ready"])
export type PoolState = typeof PoolState.Type

/**
 * A started container of a ready prebuild, holding no PR's code (its base's
 * checkout only), waiting for an open of its environment key to claim it.
 * Its password is never shown: it becomes the claiming sandbox's.
 */
export interface PoolEntry {
  /** The sandbox id it was made with: the claiming sandbox's id (its folders and container name derive from it). */
  readonly id: SandboxId
  /** The environment key it serves (its prebuild's). */
  readonly key: string
  readonly prebuildId: string
  /** The base commit its workspace holds. */
  readonly baseCommit: string
  readonly host: string
  readonly repository: string
  readonly state: PoolState
  readonly containerId: string | null
  readonly hostPort: number | null
  readonly workspacePath: string
  readonly createdAt: Timestamp
}

/** The label on every pool container (its value: the environment key); the PR it serves lives in the rows. */
export const POOL_LABEL = "dev.prbox.pool"

/** How many containers to make for `key` so that `size` of them wait (none while one is being made). */
export const poolShortfall = (entries: ReadonlyArray<PoolEntry>, key: string, size: number): number => {
  const ofKey = entries.filter((entry) => entry.key === key)
  if (ofKey.some((entry) => entry.state === "making")) return 0
  return Math.max(0, size - ofKey.length)
}

/**
 * What gc removes: ready entries idle past `idleMinutes` (a pool container
 * is idle from its making on), and every entry of a key the pool no longer
 * keeps (`size` 0); never one being made. (A claimed one is no longer an
 * entry: the store lets a claim or a removal of one entry win, never both.)
 */
export const planPoolGc = (
  entries: ReadonlyArray<PoolEntry>,
  now: number,
  pool: { readonly size: number; readonly idleMinutes: number }
): ReadonlyArray<PoolEntry> =>
  entries.filter(
    (entry) => entry.state === "ready" && (pool.size === 0 || now - entry.createdAt >= pool.idleMinutes * 60_000)
  )
