/**
 * The points at which the warm pool's crash test kills the engine: each
 * step of a claim (the open that turns a pool container into the PR's
 * sandbox), a pool container being made, a prebuild being made.
 */
export const POOL_PHASES = [
  "claim-after-transaction",
  "claim-mid-bring-in",
  "claim-mid-checkout",
  "claim-mid-setup",
  "claim-before-running",
  "pool-mid-make",
  "prebuild-mid-make"
] as const

export type PoolPhase = (typeof POOL_PHASES)[number]

export const isPoolPhase = (value: string | undefined): value is PoolPhase =>
  POOL_PHASES.some((phase) => phase === value)

/** The phases killed inside a claim. */
export const isClaimPhase = (phase: PoolPhase): boolean => phase.startsWith("claim-")

/** The PR the child opens (or prebuilds the base of): PRBOX_CRASH_PR. */
export const PR_ENV = "PRBOX_CRASH_PR"

/**
 * Which claim phase an exec in a sandbox's container ends (the child halts
 * right after it): the PR's objects unbundled and its head checked out over
 * the base (one exec), `updateContentCommand` (the pool tests' devcontainer
 * appends to deps/log) run on the PR. (claim-mid-bring-in halts once the
 * PR's bundle is made on the host, before the container is given it.)
 */
export const execPhase = (argv: ReadonlyArray<string>): PoolPhase | undefined => {
  const line = argv.join(" ")
  if (line.includes("checkout --quiet --force")) return "claim-mid-checkout"
  if (line.includes("deps/log")) return "claim-mid-setup"
  return undefined
}
