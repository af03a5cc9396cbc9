import { Clock, Effect, Layer, Option, Ref, Stream } from "effect"
import { HttpClient } from "effect/http"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import {
  credentialQuery,
  parseCallerAccount,
  parseCredentialPassword,
  parseUserId,
  userRequest
} from "../AccountDiscovery.ts"
import { AccountIdentity, type AccountQuery } from "../AccountIdentity.ts"
import * as NodePlatform from "./NodePlatform.ts"

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
const hostToken = (spawner: ChildProcessSpawner.ChildProcessSpawner["Service"], host: string, timeoutMs: number) =>
  Effect.gen(function* () {
    const handle = yield* spawner.spawn(
      ChildProcess.make("git", ["credential", "fill"], {
        env: { GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "", SSH_ASKPASS: "" },
        extendEnv: true,
        stdin: { stream: Stream.make(new TextEncoder().encode(credentialQuery(host))) }
      })
    )
    const [stdout, exitCode] = yield* Effect.all(
      [handle.stdout.pipe(Stream.decodeText(), Stream.mkString), handle.exitCode, Stream.runDrain(handle.stderr)],
      { concurrency: "unbounded" }
    )
    return exitCode === 0 ? parseCredentialPassword(stdout) : undefined
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(undefined) }),
    Effect.orElseSucceed(() => undefined)
  )

const codeHostAccount = (
  services: {
    readonly spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]
    readonly http: HttpClient.HttpClient
  },
  query: AccountQuery,
  options: Options,
  timeoutMs: number
) =>
  Effect.gen(function* () {
    const token = yield* hostToken(services.spawner, query.host, timeoutMs)
    if (token === undefined) return undefined
    const request = userRequest(query.provider, query.host, token)
    if (request === undefined) return undefined
    const url =
      options.apiBase === undefined ? request.url : request.url.replace(/^https:\/\/[^/]+/, options.apiBase(query.host))
    const body = yield* services.http.get(url, { headers: request.headers }).pipe(
      Effect.flatMap((response) =>
        response.status >= 200 && response.status < 300 ? response.json : Effect.succeed(undefined)
      ),
      Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed(undefined) }),
      Effect.orElseSucceed(() => undefined)
    )
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
      const services = { spawner: yield* ChildProcessSpawner.ChildProcessSpawner, http: yield* HttpClient.HttpClient }
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
                ? yield* codeHostAccount(services, query, options, timeoutMs)
                : undefined
          if (account === undefined) return Option.none()
          yield* Ref.update(cache, (map) => new Map(map).set(key, { account, at: now }))
          return Option.some(account)
        })
      })
    })
  ).pipe(Layer.provide(NodePlatform.layer))
