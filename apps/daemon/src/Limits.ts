/**
 * The socket API's bounds (design guarantee 10). Defaults suit one user's
 * CLI and editor; each can be tuned with an environment variable (tests use
 * small values to reach the limits quickly).
 */
export interface Limits {
  /** Largest request body; a larger `Content-Length` is answered 413 before the body is read. */
  readonly maxBodyBytes: number
  /** Deadline for receiving a whole request, headers and body (Node's `requestTimeout`): 408. */
  readonly requestTimeoutMs: number
  /** Deadline for receiving the headers (Node's `headersTimeout`): 408. */
  readonly headersTimeoutMs: number
  /** Ordinary requests in flight at once; one more is answered 503 with `Retry-After`. */
  readonly maxRequests: number
  /** Event streams open at once (they do not count as requests); one more is answered 503. */
  readonly maxStreams: number
  readonly retryAfterSeconds: number
}

export const defaultLimits: Limits = {
  maxBodyBytes: 256 * 1024,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  maxRequests: 32,
  maxStreams: 64,
  retryAfterSeconds: 1
}

const ENV = {
  maxBodyBytes: "PRBOXD_MAX_BODY_BYTES",
  requestTimeoutMs: "PRBOXD_REQUEST_TIMEOUT_MS",
  headersTimeoutMs: "PRBOXD_HEADERS_TIMEOUT_MS",
  maxRequests: "PRBOXD_MAX_REQUESTS",
  maxStreams: "PRBOXD_MAX_STREAMS"
} as const

/** Reads the overrides; a value that is not a positive integer is an error (the daemon refuses to start). */
export const limitsFromEnv = (env: NodeJS.ProcessEnv = process.env): Limits => {
  const read = (key: keyof typeof ENV): number => {
    const raw = env[ENV[key]]
    if (raw === undefined || raw === "") return defaultLimits[key]
    const value = Number(raw)
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new Error(`${ENV[key]} must be a positive integer, got ${JSON.stringify(raw)}`)
    }
    return value
  }
  const requestTimeoutMs = read("requestTimeoutMs")
  return {
    maxBodyBytes: read("maxBodyBytes"),
    requestTimeoutMs,
    // Node refuses a headers timeout longer than the request timeout.
    headersTimeoutMs: Math.min(read("headersTimeoutMs"), requestTimeoutMs),
    maxRequests: read("maxRequests"),
    maxStreams: read("maxStreams"),
    retryAfterSeconds: defaultLimits.retryAfterSeconds
  }
}
