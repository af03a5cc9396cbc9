import { Config, Schema } from "effect"

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
  /** Preview connections open at once, and to one sandbox; one more is answered 503. */
  readonly maxPreviewConnections: number
  readonly maxPreviewConnectionsPerSandbox: number
  /** A preview connection with no bytes either way for this long is closed. */
  readonly previewIdleTimeoutMs: number
}

export const defaultLimits: Limits = {
  // A file write of MAX_WRITE_BYTES fits even with JSON escapes.
  maxBodyBytes: 2 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  maxRequests: 32,
  maxStreams: 64,
  retryAfterSeconds: 1,
  maxPreviewConnections: 512,
  maxPreviewConnectionsPerSandbox: 256,
  previewIdleTimeoutMs: 15 * 60_000
}

const PositiveInt = Schema.Int.check(Schema.isGreaterThan(0))

/** One override: a positive integer; unset (or empty) is the default, anything else refuses to start. */
const positive = (name: string, fallback: number): Config.Config<number> =>
  Config.schema(PositiveInt, name).pipe(Config.withDefault(fallback))

/** `PRBOXD_MAX_STREAMS must be a positive integer, got "abc"`: the variable and its value, not the decoder's words. */
export const describeLimitsError = (error: Config.ConfigError, env: NodeJS.ProcessEnv = process.env): string => {
  const cause = error.cause
  if (Schema.isSchemaError(cause) && cause.issue._tag === "Pointer") {
    const name = cause.issue.path.join(".")
    return `${name} must be a positive integer, got ${JSON.stringify(env[name] ?? "")}`
  }
  return error.message
}

/** The overrides from the environment (`PRBOXD_MAX_BODY_BYTES`, ...); a bad value is a ConfigError. */
export const limitsConfig: Config.Config<Limits> = Config.all({
  maxBodyBytes: positive("PRBOXD_MAX_BODY_BYTES", defaultLimits.maxBodyBytes),
  requestTimeoutMs: positive("PRBOXD_REQUEST_TIMEOUT_MS", defaultLimits.requestTimeoutMs),
  headersTimeoutMs: positive("PRBOXD_HEADERS_TIMEOUT_MS", defaultLimits.headersTimeoutMs),
  maxRequests: positive("PRBOXD_MAX_REQUESTS", defaultLimits.maxRequests),
  maxStreams: positive("PRBOXD_MAX_STREAMS", defaultLimits.maxStreams),
  maxPreviewConnections: positive("PRBOXD_PREVIEW_MAX_CONNECTIONS", defaultLimits.maxPreviewConnections),
  maxPreviewConnectionsPerSandbox: positive(
    "PRBOXD_PREVIEW_MAX_PER_SANDBOX",
    defaultLimits.maxPreviewConnectionsPerSandbox
  ),
  previewIdleTimeoutMs: positive("PRBOXD_PREVIEW_IDLE_TIMEOUT_MS", defaultLimits.previewIdleTimeoutMs)
}).pipe(
  Config.map((limits) => ({
    ...limits,
    // Node refuses a headers timeout longer than the request timeout.
    headersTimeoutMs: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    retryAfterSeconds: defaultLimits.retryAfterSeconds
  }))
)
