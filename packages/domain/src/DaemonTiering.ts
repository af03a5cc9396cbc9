/**
 * How V8 tiers prboxd's code up. The daemon's start-up (its modules' bodies,
 * the layers, the first reconcile over every row) runs once, yet crosses V8's
 * thresholds and pulls in both optimizing compilers: about 8 MiB an idle
 * daemon then keeps. The daemon starts with the thresholds raised far above
 * anything start-up reaches, and puts V8's own values back once it serves, so
 * requests are optimized as they would be without this.
 */

/** V8's defaults in the Node this project runs (a test compares them with `node --v8-options`). */
export const V8_TIERING_DEFAULTS = {
  "invocation-count-for-maglev": 400,
  "invocation-count-for-maglev-osr": 100,
  "invocation-count-for-turbofan": 3000,
  "invocation-count-for-osr": 500
} as const

const STARTUP_FACTOR = 100

const tieringFlags = (factor: number): Array<string> =>
  Object.entries(V8_TIERING_DEFAULTS).map(([flag, value]) => `--${flag}=${value * factor}`)

/** The thresholds prboxd starts with (command-line flags). */
export const STARTUP_TIERING_FLAGS: ReadonlyArray<string> = tieringFlags(STARTUP_FACTOR)

/** V8's own thresholds, set back (`v8.setFlagsFromString`) once the daemon serves. */
export const SERVING_TIERING_FLAGS: ReadonlyArray<string> = tieringFlags(1)
