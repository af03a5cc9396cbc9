/**
 * How often a starting sandbox's code-server is probed. Its output is
 * followed meanwhile: once it says it listens ("HTTP server listening on"),
 * /healthz is probed every 20 ms, so readiness is seen within ~25 ms (the
 * line's way through Docker, one probe) while the probes that confirm it
 * stay a handful. Until then (an image whose code-server logs otherwise, or
 * output that cannot be followed) it is probed 10 times a second; a start
 * that takes longer (a slow image, a loaded machine) every half second, so a
 * long wait does not keep the daemon busy.
 */
export const HEALTH_PROBE_FAST_MS = 20
export const HEALTH_PROBE_UNHEARD_MS = 100
export const HEALTH_PROBE_FAST_FOR_MS = 15_000
export const HEALTH_PROBE_SLOW_MS = 500

/** code-server's line saying it listens (`HTTP server listening on http://0.0.0.0:8080/`; HTTPS with a certificate). */
export const isCodeServerListeningLine = (line: string): boolean => /\bHTTPS? server listening on /.test(line)

/**
 * The pause before the next probe, `elapsedMs` after the wait began;
 * `heard`: code-server's output said it listens.
 */
export const healthProbePause = (elapsedMs: number, heard: boolean): number =>
  elapsedMs >= HEALTH_PROBE_FAST_FOR_MS ? HEALTH_PROBE_SLOW_MS : heard ? HEALTH_PROBE_FAST_MS : HEALTH_PROBE_UNHEARD_MS
