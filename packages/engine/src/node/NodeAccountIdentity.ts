import { HostingClients, hostCredential } from "@prbox/git"
import { Clock, Effect, Layer, Option, Ref } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import { AccountIdentity, type AccountQuery } from "../AccountIdentity.ts"
import { parseCallerAccount, parseUserId } from "../reconcile/AccountDiscovery.ts"
import * as NodePlatform from "./NodePlatform.ts"

export interface Options {
  /** Bound on one discovery; past it, discovery is unavailable. */
  readonly timeoutMs?: number
  /** How long a discovered identity is reused (re-opens must stay fast). */
  readonly cacheMs?: number
  /** Overrides the STS endpoint (tests point it at a local server). */
  readonly stsEndpoint?: string
  /** Overrides `https://<host>` for the code hosts' APIs (github.com: `https://api.github.com`; tests point it at a local server). */
  readonly apiBase?: (host: string) => string
}

/**
 * The token's user id, asked through the same per-host client as the pull
 * request lookups (GitHub: `GET /user`; GitLab: `GET /api/v4/user`).
 */
const codeHostAccount = (query: AccountQuery, options: Options, timeoutMs: number) =>
  Effect.gen(function* () {
    const credential = yield* hostCredential(query.provider, query.host, { timeoutMs })
    if (credential?._tag !== "Token") return undefined
    const clients = yield* HostingClients
    const place = { host: query.host, origin: options.apiBase?.(query.host) }
    const user: unknown =
      query.provider === "github"
        ? yield* Effect.flatMap(clients.github(place, credential.token), (octokit) =>
            Effect.tryPromise((signal) =>
              octokit.rest.users.getAuthenticated({ request: { signal } }).then((response) => response.data)
            )
          )
        : yield* Effect.flatMap(clients.gitlab(place, credential.token, timeoutMs), (gitlab) =>
            Effect.tryPromise(() => gitlab.Users.showCurrentUser())
          )
    return parseUserId(user)
  }).pipe(
    Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(undefined) }),
    Effect.orElseSucceed(() => undefined)
  )

const awsAccount = (query: AccountQuery, options: Options, timeoutMs: number) =>
  Effect.tryPromise(async (signal) => {
    // The bound covers loading the AWS SDK too: it is large, so it is loaded
    // on the first CodeCommit discovery rather than with the daemon.
    const deadline = AbortSignal.timeout(timeoutMs)
    const [{ GetCallerIdentityCommand, STSClient }, { fromIni }] = await Promise.all([
      import("@aws-sdk/client-sts"),
      import("@aws-sdk/credential-providers")
    ])
    const client = new STSClient({
      region: query.host,
      credentials: fromIni(query.profile === undefined ? {} : { profile: query.profile }),
      ...(options.stsEndpoint === undefined ? {} : { endpoint: options.stsEndpoint }),
      maxAttempts: 1
    })
    try {
      const output = await client.send(new GetCallerIdentityCommand({}), {
        abortSignal: AbortSignal.any([signal, deadline])
      })
      return parseCallerAccount(output)
    } finally {
      client.destroy()
    }
  }).pipe(Effect.orElseSucceed(() => undefined))

/**
 * Discovers the account behind a profile: STS for CodeCommit, the token's
 * user for GitHub and GitLab, nothing for plain git. Any failure (no token,
 * no network, a refusal) is "unavailable", never an error.
 */
export const layer = (options: Options = {}) =>
  Layer.effect(
    AccountIdentity,
    Effect.gen(function* () {
      const timeoutMs = options.timeoutMs ?? 5_000
      const cacheMs = options.cacheMs ?? 10 * 60_000
      const services = yield* Effect.context<HostingClients | ChildProcessSpawner.ChildProcessSpawner>()
      const cache = yield* Ref.make(new Map<string, { readonly account: string; readonly at: number }>())
      return AccountIdentity.of({
        discover: Effect.fn("AccountIdentity.discover")(function* (query) {
          const key = [query.provider, query.host, query.profile ?? ""].join("\0")
          const now = yield* Clock.currentTimeMillis
          const cached = (yield* Ref.get(cache)).get(key)
          if (cached !== undefined && now - cached.at < cacheMs) return Option.some(cached.account)
          const account =
            query.provider === "codecommit"
              ? yield* awsAccount(query, options, timeoutMs)
              : query.provider === "github" || query.provider === "gitlab"
                ? yield* codeHostAccount(query, options, timeoutMs).pipe(Effect.provide(services))
                : undefined
          if (account === undefined) return Option.none()
          yield* Ref.update(cache, (map) => new Map(map).set(key, { account, at: now }))
          return Option.some(account)
        })
      })
    })
  ).pipe(Layer.provide(Layer.merge(NodePlatform.layer, HostingClients.layer)))
