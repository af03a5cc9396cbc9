import type { PullRequestInfo, PullRequestLookup } from "@prbox/domain"
import { Effect } from "effect"
import type { PullRequestLocation } from "./PullRequests.ts"

// How every hosting service's answer becomes a lookup: the call bounded by
// the caller's interruption, an HTTP refusal classified, and nothing of the
// user's credential in any text.

/** A refusal from a hosting service's API, as its client reported it. */
export interface ServiceFailure {
  readonly status: number
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>
  /** The service's own message, when it gave one. */
  readonly message: string | undefined
  /** The client found no credential at all (the AWS chain). */
  readonly noCredential?: boolean
}

export interface Hints {
  /** What the user sets so that the service answers. */
  readonly configure: string
  /** Strings that must not appear in any answer. */
  readonly secrets: ReadonlyArray<string>
}

/** Service text made safe to show: one line, bounded, no secret. */
export const safeText = (text: string, secrets: ReadonlyArray<string>): string => {
  const redacted = secrets.reduce((acc, secret) => (secret === "" ? acc : acc.replaceAll(secret, "***")), text)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const line = redacted.replace(/[\u0000-\u001f\u007f]+/g, " ").trim()
  return line.length > 200 ? `${line.slice(0, 199)}…` : line
}

/** Seconds until a rate limit lifts: `Retry-After` (seconds or a date), else GitHub's `x-ratelimit-reset`. */
export const retryAfterSeconds = (headers: ServiceFailure["headers"], nowMs: number): number | undefined => {
  const retryAfter = headers["retry-after"]
  if (retryAfter !== undefined) {
    if (/^\d+$/.test(retryAfter.trim())) return Number(retryAfter.trim())
    const date = Date.parse(retryAfter)
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - nowMs) / 1000))
  }
  const reset = headers["x-ratelimit-reset"]
  if (reset !== undefined && /^\d+$/.test(reset.trim()))
    return Math.max(0, Number(reset.trim()) - Math.floor(nowMs / 1000))
  return undefined
}

const isRateLimit = (failure: ServiceFailure): boolean =>
  failure.status === 429 ||
  (failure.status === 403 &&
    (failure.headers["x-ratelimit-remaining"] === "0" || failure.headers["retry-after"] !== undefined))

/** A refusal's answer: 404 is `Missing` (the service's word), the rest `Unknown`. */
export const failureAnswer = (
  at: PullRequestLocation,
  failure: ServiceFailure,
  hints: Hints,
  nowMs: number
): PullRequestLookup => {
  const said = failure.message === undefined ? "" : safeText(failure.message, hints.secrets)
  if (failure.noCredential)
    return { _tag: "Unknown", reason: `no credentials for ${at.host}`, configure: hints.configure }
  if (failure.status === 404) {
    return {
      _tag: "Missing",
      detail: `${at.host} has no pull request #${at.pullRequest} in ${at.repository}${said === "" ? "" : ` (${said})`}`
    }
  }
  if (isRateLimit(failure)) {
    const seconds = retryAfterSeconds(failure.headers, nowMs)
    return {
      _tag: "Unknown",
      reason: `${at.host} rate limited the lookup (${failure.status}); ${seconds === undefined ? "retry later" : `retry after ${seconds} s`}`
    }
  }
  if (failure.status === 401 || failure.status === 403) {
    return {
      _tag: "Unknown",
      reason: `${at.host} refused the credentials (${failure.status})`,
      configure: hints.configure
    }
  }
  return { _tag: "Unknown", reason: `${at.host} answered ${failure.status}${said === "" ? "" : `: ${said}`}` }
}

/** Runs `use` with a client loaded on first use; a client that cannot load is `Unknown`. */
export const withClient = <C, R>(
  service: string,
  load: Effect.Effect<C, unknown, R>,
  use: (client: C) => Effect.Effect<PullRequestLookup>
): Effect.Effect<PullRequestLookup, never, R> =>
  Effect.matchEffect(load, {
    onFailure: () => Effect.succeed({ _tag: "Unknown", reason: `the ${service} client could not be loaded` } as const),
    onSuccess: use
  })

/** The system error code of a failed connection (ECONNREFUSED, ENOTFOUND …), never its message. */
const errorCode = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; typeof current === "object" && current !== null && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]+$/.test(code)) return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * Asks a hosting service: `ask` is the client's call (it receives the
 * signal that aborts it when the lookup is interrupted), `known` reads its
 * answer, `failure` recognises the client's refusal. Anything else (no
 * connection, a malformed answer) is `Unknown` naming only an error code.
 */
export const askService = <A>(
  at: PullRequestLocation,
  hints: Hints,
  call: {
    readonly ask: (signal: AbortSignal) => Promise<A>
    readonly known: (answer: A) => PullRequestInfo | PullRequestLookup
    readonly failure: (error: unknown) => ServiceFailure | undefined
  }
): Effect.Effect<PullRequestLookup> =>
  Effect.tryPromise({
    // Reading the answer is inside the call: a malformed one is a failure too.
    try: async (signal): Promise<PullRequestLookup> => {
      const read = call.known(await call.ask(signal))
      return "_tag" in read ? read : { _tag: "Known", info: read }
    },
    catch: (error) => error
  }).pipe(
    Effect.catch((error) => {
      const failure = call.failure(error)
      if (failure !== undefined) return Effect.succeed(failureAnswer(at, failure, hints, Date.now()))
      const code = errorCode(error)
      return Effect.succeed<PullRequestLookup>({
        _tag: "Unknown",
        reason: `could not ask ${at.host}${code === undefined ? "" : ` (${code})`}`
      })
    })
  )
