import type { OciReference } from "@prbox/domain"
import { Effect, Redacted } from "effect"
import { type Challenge, parseChallenge } from "../Challenge.ts"
import { basicAuthorization, type Credentials } from "../Credentials.ts"
import type { RegistryError } from "../RegistryError.ts"
import { type Answer, allowedUrl, type Exchange, failure, type Subject, send } from "./Http.ts"

/**
 * Requests to one repository of one registry, authorised as the registry
 * asks: anonymous first; on a 401 its challenge is answered once (a Bearer
 * token from its realm, anonymous or with the credentials given; Basic with
 * the credentials given) and the request repeated. The authorisation found
 * is kept for the session's later requests (the manifest, then the blob).
 */

// A token answer is a small JSON object.
const TOKEN_BYTES = 1024 * 1024

/** The 401/403 sentence: what to do about it, never what was sent. */
export const deniedDetail = (registry: string, status: number, withCredentials: boolean): string =>
  withCredentials
    ? `the registry refused the credentials from your Docker config (${status})`
    : `the registry needs credentials (${status}); to use yours, add "${registry}" to registryCredentials in prbox's config.json`

const tokenOf = (answer: Answer): string | undefined => {
  try {
    const body = JSON.parse(new TextDecoder().decode(answer.bytes)) as { token?: unknown; access_token?: unknown }
    const token = typeof body.token === "string" && body.token !== "" ? body.token : body.access_token
    return typeof token === "string" && token !== "" ? token : undefined
  } catch {
    return undefined
  }
}

export const session = (
  subject: Subject,
  reference: OciReference,
  credentials: Credentials | undefined,
  timeoutMs: number
) => {
  let authorization: string | undefined
  const denied = (status: number) =>
    failure(subject, "unauthorized", deniedDetail(reference.registry, status, credentials !== undefined))

  /** A registry token for the challenge's scope (this repository's pull when it names none). */
  const bearer = (challenge: Challenge & { _tag: "Bearer" }, from: URL) =>
    Effect.gen(function* () {
      const realm = yield* Effect.try({
        try: () => new URL(challenge.realm),
        catch: () => failure(subject, "protocol", "the registry's token realm is not a URL")
      })
      const refused = allowedUrl(realm, from)
      if (refused !== undefined) return yield* failure(subject, "refused", `token realm ${realm.host}: ${refused}`)
      const scope = challenge.scope ?? `repository:${reference.repository}:pull`
      const exchange: Exchange =
        credentials?._tag === "IdentityToken"
          ? {
              method: "POST",
              headers: { "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({
                grant_type: "refresh_token",
                client_id: "prbox",
                refresh_token: Redacted.value(credentials.token),
                scope,
                ...(challenge.service === undefined ? {} : { service: challenge.service })
              }).toString(),
              maxBytes: TOKEN_BYTES,
              timeoutMs
            }
          : {
              headers: credentials === undefined ? {} : { authorization: basicAuthorization(credentials) ?? "" },
              maxBytes: TOKEN_BYTES,
              timeoutMs
            }
      if (exchange.method !== "POST") {
        if (challenge.service !== undefined) realm.searchParams.set("service", challenge.service)
        realm.searchParams.set("scope", scope)
      }
      const answer = yield* send(subject, realm, exchange)
      if (answer.status === 401 || answer.status === 403) return yield* denied(answer.status)
      if (answer.status !== 200) {
        return yield* failure(subject, "protocol", `the token realm answered ${answer.status}`)
      }
      const token = tokenOf(answer)
      if (token === undefined) return yield* failure(subject, "protocol", "the token realm sent no token")
      return `Bearer ${token}`
    })

  /** How to answer a 401's challenge; fails when there is no way. */
  const answerTo = (answer: Answer): Effect.Effect<string, RegistryError> => {
    const challenge = parseChallenge(answer.headers.get("www-authenticate"))
    if (challenge === undefined) return Effect.fail(denied(answer.status))
    if (challenge._tag === "Bearer") return bearer(challenge, answer.url)
    const basic = credentials === undefined ? undefined : basicAuthorization(credentials)
    // Basic sends the password itself: only to this machine or over https.
    if (basic === undefined || allowedUrl(answer.url, undefined) !== undefined) {
      return Effect.fail(denied(answer.status))
    }
    return Effect.succeed(basic)
  }

  const withAuthorization = (exchange: Exchange): Exchange =>
    authorization === undefined ? exchange : { ...exchange, headers: { ...exchange.headers, authorization } }

  return {
    /** `exchange` to `url`, authorised as the registry asks; a 401 or 403 that remains is `unauthorized`. */
    send: (url: URL, exchange: Exchange): Effect.Effect<Answer, RegistryError> =>
      Effect.gen(function* () {
        const first = yield* send(subject, url, withAuthorization(exchange))
        if (first.status === 403) return yield* denied(403)
        if (first.status !== 401) return first
        if (authorization !== undefined) return yield* denied(401)
        authorization = yield* answerTo(first)
        const second = yield* send(subject, url, withAuthorization(exchange))
        if (second.status === 401 || second.status === 403) return yield* denied(second.status)
        return second
      })
  }
}
