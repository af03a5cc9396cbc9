import type { PullRequestLookup } from "@prbox/domain"
import { Cache, Effect, Exit, Layer } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import { configureHint, hostCredential, secretsOf } from "../HostCredentials.ts"
import { HostingClients } from "../HostingClients.ts"
import { type PullRequestLocation, PullRequests } from "../PullRequests.ts"
import { defaultBitbucketApi, lookupBitbucket } from "./BitbucketPulls.ts"
import { lookupCodeCommit } from "./CodeCommitPulls.ts"
import { lookupGitHub } from "./GitHubPulls.ts"
import { lookupGitLab } from "./GitLabPulls.ts"

export interface Options {
  /** Bound on one lookup, credentials included; past it the answer is `Unknown`. */
  readonly timeoutMs?: number
  /** How long a `Known` or `Missing` answer is reused. */
  readonly cacheMs?: number
  /** Replaces `https://<host>` for GitHub and GitLab APIs (github.com: `https://api.github.com`). */
  readonly apiBase?: (host: string) => string
  /** Replaces `https://api.bitbucket.org`. */
  readonly bitbucketApiBase?: string
  /** Replaces CodeCommit's regional endpoint. */
  readonly codeCommitEndpoint?: string
}

const ask = (
  at: PullRequestLocation,
  options: Options,
  timeoutMs: number
): Effect.Effect<PullRequestLookup, never, HostingClients | ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.gen(function* () {
    const configure = configureHint(at.provider, at.host, at.profile)
    if (at.provider === "codecommit")
      return yield* lookupCodeCommit(at, options.codeCommitEndpoint, { configure, secrets: [] })
    if (at.provider === "git") return { _tag: "Unknown", reason: "a plain git remote has no hosting service to ask" }
    if (at.provider === "bitbucket" && at.host !== "bitbucket.org") {
      return { _tag: "Unknown", reason: `${at.host}'s Bitbucket Server API is not asked` }
    }
    const credential = yield* hostCredential(at.provider, at.host, { timeoutMs })
    if (credential === undefined) return { _tag: "Unknown", reason: `no credentials for ${at.host}`, configure }
    const hints = { configure, secrets: secretsOf(credential) }
    const token = credential._tag === "Token" ? credential.token : credential.password
    const origin = options.apiBase?.(at.host)
    switch (at.provider) {
      case "github":
        return yield* lookupGitHub(at, token, origin, hints)
      case "gitlab":
        return yield* lookupGitLab(at, token, origin, timeoutMs, hints)
      case "bitbucket":
        return yield* lookupBitbucket(at, credential, options.bitbucketApiBase ?? defaultBitbucketApi, hints)
    }
  })

// One lookup per pull request and profile: concurrent lookups share it.
const keyOf = (at: PullRequestLocation): string =>
  JSON.stringify([at.provider, at.host, at.repository, at.pullRequest, at.profile ?? null])

const locationOf = (key: string): PullRequestLocation => {
  const [provider, host, repository, pullRequest, profile] = JSON.parse(key)
  return { provider, host, repository, pullRequest, ...(profile === null ? {} : { profile }) }
}

/**
 * Asks each pull request's hosting service with the user's own credentials:
 * GitHub and GitHub Enterprise (Octokit), GitLab (Gitbeaker), Bitbucket Cloud
 * (its REST API), CodeCommit (the AWS SDK). Bounded in time; `Known` and
 * `Missing` answers are reused for `cacheMs` (by the effect Clock), `Unknown`
 * is asked again next time.
 */
export const layer = (options: Options = {}) =>
  Layer.effect(
    PullRequests,
    Effect.gen(function* () {
      const timeoutMs = options.timeoutMs ?? 5_000
      const cacheMs = options.cacheMs ?? 60_000
      const cache = yield* Cache.makeWith(
        (key: string) => {
          const at = locationOf(key)
          return ask(at, options, timeoutMs).pipe(
            Effect.timeoutOrElse({
              duration: timeoutMs,
              orElse: () =>
                Effect.succeed<PullRequestLookup>({
                  _tag: "Unknown",
                  reason: `${at.host} did not answer within ${timeoutMs / 1000} s`
                })
            })
          )
        },
        {
          capacity: 1_000,
          timeToLive: (exit) => (Exit.isSuccess(exit) && exit.value._tag !== "Unknown" ? cacheMs : 0)
        }
      )
      return PullRequests.of({
        lookup: Effect.fn("PullRequests.lookup")(function* (at) {
          return yield* Cache.get(cache, keyOf(at))
        })
      })
    })
  ).pipe(Layer.provide(HostingClients.layer))
