import { execFile } from "node:child_process"
import { Clock, Effect, Layer, Option, Ref } from "effect"
import {
  credentialQuery,
  parseCallerAccount,
  parseCredentialPassword,
  parseUserId,
  userRequest
} from "./AccountDiscovery.ts"
import { AccountIdentity, type AccountQuery } from "./AccountIdentity.ts"

export interface Options {
  /** Bound on one discovery; past it, discovery is unavailable. */
  readonly timeoutMs?: number
  /** How long a discovered identity is reused (re-opens must stay fast). */
  readonly cacheMs?: number
  /** Overrides the STS endpoint (tests point it at a local server). */
  readonly stsEndpoint?: string
  /** Overrides `https://<host>` for the code hosts' APIs (tests point it at a local server). */
  readonly apiBase?: (host: string) => string
}

/** A token from the user's own git credential helpers; never prompts, never stored. */
const hostToken = (host: string, timeoutMs: number) =>
  Effect.callback<string | undefined>((resume) => {
    const child = execFile(
      "git",
      ["credential", "fill"],
      { timeout: timeoutMs, env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", SSH_ASKPASS: "" } },
      (error, stdout) => resume(Effect.succeed(error === null ? parseCredentialPassword(stdout) : undefined))
    )
    child.stdin?.end(credentialQuery(host))
    return Effect.sync(() => child.kill())
  })

const codeHostAccount = (query: AccountQuery, options: Options, timeoutMs: number) =>
  Effect.gen(function* () {
    const token = yield* hostToken(query.host, timeoutMs)
    if (token === undefined) return undefined
    const request = userRequest(query.provider, query.host, token)
    if (request === undefined) return undefined
    const url =
      options.apiBase === undefined ? request.url : request.url.replace(/^https:\/\/[^/]+/, options.apiBase(query.host))
    const body = yield* Effect.tryPromise(async (signal) => {
      const response = await fetch(url, {
        headers: request.headers,
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
      })
      return response.ok ? ((await response.json()) as unknown) : undefined
    }).pipe(Effect.orElseSucceed(() => undefined))
    return parseUserId(body)
  })

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
                ? yield* codeHostAccount(query, options, timeoutMs)
                : undefined
          if (account === undefined) return Option.none()
          yield* Ref.update(cache, (map) => new Map(map).set(key, { account, at: now }))
          return Option.some(account)
        })
      })
    })
  )
