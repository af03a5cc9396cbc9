import { createHash } from "node:crypto"
import { isLoopback } from "@prbox/domain"
import { Effect } from "effect"
import { RegistryError, type RegistryFailure } from "../RegistryError.ts"

/**
 * One bounded HTTP exchange on Node's fetch: plain HTTP only to loopback,
 * redirects followed by hand (to https, or to loopback only from loopback;
 * `Authorization` dropped when the origin changes), the body read up to a
 * cap, the whole exchange under a deadline. Every failure is a RegistryError.
 */

/** Who is asking, for the error: the operation, the registry (a tarball's host) and what was asked for. */
export interface Subject {
  readonly operation: string
  readonly registry: string
  readonly reference: string
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Uint8Array
  /** Where the answer came from, after redirects. */
  readonly url: URL
}

export interface Exchange {
  readonly method?: "GET" | "POST"
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** The body's cap (an error answer's body is read up to a small cap of its own). */
  readonly maxBytes: number
  readonly timeoutMs: number
}

const MAX_REDIRECTS = 5
// An error answer is read for its registry error codes only.
const ERROR_BODY_BYTES = 64 * 1024

export const sha256 = (bytes: Uint8Array): string => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

export const failure = (subject: Subject, reason: RegistryFailure, detail: string) =>
  new RegistryError({ ...subject, reason, detail })

const isLoopbackUrl = (url: URL): boolean => isLoopback(url.host)

/** https anywhere; http only to this machine, and only when the request did not start elsewhere. */
export const allowedUrl = (url: URL, from: URL | undefined): string | undefined => {
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${url.protocol} is not http(s)`
  if (url.username !== "" || url.password !== "") return "a URL with credentials in it is not used"
  if (from !== undefined && isLoopbackUrl(url) && !isLoopbackUrl(from)) return "a redirect to this machine is refused"
  if (url.protocol === "http:" && !isLoopbackUrl(url)) return `plain HTTP to ${url.host} is refused: https only`
  return undefined
}

class TooLarge extends Error {}

/** The network error's code (ECONNREFUSED, ENOTFOUND, …) behind fetch's "fetch failed". */
const causeCode = (cause: unknown): string => {
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  const code = typeof inner === "object" && inner !== null && "code" in inner ? inner.code : undefined
  return typeof code === "string" ? code : inner instanceof Error ? inner.message : String(inner)
}

/** Reads at most `maxBytes` of a body; past it the transfer is cancelled. */
const readCapped = async (response: Response, maxBytes: number): Promise<Uint8Array> => {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN)
  if (declared > maxBytes) {
    await response.body?.cancel()
    throw new TooLarge(`${declared} bytes`)
  }
  const chunks: Array<Uint8Array> = []
  let total = 0
  if (response.body !== null) {
    for await (const chunk of response.body) {
      total += chunk.byteLength
      if (total > maxBytes) throw new TooLarge(`more than ${maxBytes} bytes`)
      chunks.push(chunk)
    }
  }
  return Buffer.concat(chunks, total)
}

const once = (subject: Subject, url: URL, exchange: Exchange, headers: Record<string, string>) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, {
        method: exchange.method ?? "GET",
        headers,
        redirect: "manual",
        signal,
        ...(exchange.body === undefined ? {} : { body: exchange.body })
      })
      const redirected = response.status >= 300 && response.status < 400 && response.headers.has("location")
      const cap = response.ok ? exchange.maxBytes : ERROR_BODY_BYTES
      const bytes = redirected ? new Uint8Array() : await readCapped(response, cap)
      if (redirected) await response.body?.cancel()
      return { status: response.status, headers: response.headers, bytes, url }
    },
    catch: (cause): RegistryError =>
      cause instanceof TooLarge
        ? failure(
            subject,
            "too-large",
            `the answer is larger than the ${exchange.maxBytes}-byte cap (${cause.message})`
          )
        : failure(subject, "unreachable", `cannot be reached at ${url.host} (${causeCode(cause)})`)
  })

/** Sends `exchange` to `start`, following redirects; the answer of the last hop, whatever its status. */
export const send = (subject: Subject, start: URL, exchange: Exchange): Effect.Effect<Answer, RegistryError> =>
  Effect.gen(function* () {
    const refused = allowedUrl(start, undefined)
    if (refused !== undefined) return yield* failure(subject, "refused", refused)
    let url = start
    let headers: Record<string, string> = { ...exchange.headers }
    for (let hop = 0; ; hop++) {
      const answer = yield* once(subject, url, exchange, headers)
      const location = answer.headers.get("location")
      if (answer.status < 300 || answer.status >= 400 || location === null) return answer
      if (hop === MAX_REDIRECTS) return yield* failure(subject, "protocol", `more than ${MAX_REDIRECTS} redirects`)
      const next = yield* Effect.try({
        try: () => new URL(location, url),
        catch: () => failure(subject, "protocol", "a redirect to something that is not a URL")
      })
      const problem = allowedUrl(next, url)
      if (problem !== undefined) return yield* failure(subject, "refused", `redirected to ${next.host}: ${problem}`)
      // Credentials for one origin never travel to another.
      if (next.origin !== url.origin) {
        const { authorization: _dropped, Authorization: _Dropped, ...rest } = headers
        headers = rest
      }
      url = next
    }
  }).pipe(
    Effect.timeoutOrElse({
      duration: exchange.timeoutMs,
      orElse: () =>
        Effect.fail(
          failure(subject, "unreachable", `no complete answer within ${Math.round(exchange.timeoutMs / 1000)} s`)
        )
    })
  )

/** The registry's error codes in an error answer (`{"errors":[{"code":"MANIFEST_UNKNOWN"}]}`), for the detail. */
export const errorCodes = (bytes: Uint8Array): string => {
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes)) as { errors?: ReadonlyArray<{ code?: unknown }> }
    const codes = (body.errors ?? []).map((error) => error.code).filter((code) => typeof code === "string")
    return codes.length === 0 ? "" : ` (${codes.join(", ")})`
  } catch {
    return ""
  }
}
