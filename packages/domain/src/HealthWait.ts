/**
 * How often a starting sandbox's code-server is probed. It usually answers
 * within a few seconds of its container starting: probed every 20 ms then,
 * its readiness is seen within ~25 ms (one pause and one probe), at ~40
 * cheap probes a second (an unanswered one is a refused or reset connection).
 * A start that takes longer (a slow image, a loaded machine) is probed every
 * half second, so a long wait does not keep the daemon busy.
 */
export const HEALTH_PROBE_FAST_MS = 20
export const HEALTH_PROBE_FAST_FOR_MS = 15_000
export const HEALTH_PROBE_SLOW_MS = 500

/** The pause before the next probe, `elapsedMs` after the wait began. */
export const healthProbePause = (elapsedMs: number): number =>
  elapsedMs < HEALTH_PROBE_FAST_FOR_MS ? HEALTH_PROBE_FAST_MS : HEALTH_PROBE_SLOW_MS
