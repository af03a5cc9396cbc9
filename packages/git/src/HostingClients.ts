import type { Gitlab } from "@gitbeaker/rest"
import type { Octokit } from "@octokit/rest"
import { Context, Effect, Layer } from "effect"
import { askOnce } from "./GitLabTransport.ts"

/** Where a host's API is reached; tests put a local server in place of `https://<host>`. */
export interface ClientPlace {
  readonly host: string
  /** Replaces `https://<host>` (github.com: `https://api.github.com`). */
  readonly origin?: string | undefined
}

export interface HostingClientsShape {
  /** The Octokit client of github.com or a GitHub Enterprise host, for this token. */
  readonly github: (place: ClientPlace, token: string) => Effect.Effect<Octokit, unknown>
  /** The Gitbeaker client of a GitLab host, for this token; each request gives up after `timeoutMs`. */
  readonly gitlab: (place: ClientPlace, token: string, timeoutMs: number) => Effect.Effect<Gitlab, unknown>
}

/**
 * One API client per hosting service and host, shared by the pull request
 * lookup and the account-identity lookup. The SDKs are loaded on first use:
 * an idle daemon never loads them. A client is replaced when the user's
 * token changes, so no old token is kept.
 */
export class HostingClients extends Context.Service<HostingClients, HostingClientsShape>()("prbox/git/HostingClients") {
  static readonly layer = Layer.sync(HostingClients, () => {
    const clients = new Map<string, { readonly token: string; readonly client: Octokit | Gitlab }>()
    const reuse = <C extends Octokit | Gitlab>(key: string, token: string, make: () => Promise<C>) =>
      Effect.tryPromise({
        try: async () => {
          const held = clients.get(key)
          if (held !== undefined && held.token === token) return held.client as C
          const client = await make()
          clients.set(key, { token, client })
          return client
        },
        catch: (error) => error
      })
    return HostingClients.of({
      github: (place, token) =>
        reuse(`github\0${githubApi(place)}`, token, async () => {
          const { Octokit } = await import("@octokit/rest")
          return new Octokit({ auth: token, baseUrl: githubApi(place), userAgent: "prbox", log: silent })
        }),
      gitlab: (place, token, timeoutMs) =>
        reuse(`gitlab\0${gitlabOrigin(place)}\0${timeoutMs}`, token, async () => {
          const [{ Gitlab }, { createRequesterFn }] = await Promise.all([
            import("@gitbeaker/rest"),
            import("@gitbeaker/requester-utils")
          ])
          return new Gitlab({
            host: gitlabOrigin(place),
            // A bearer header: GitLab takes personal and OAuth tokens alike there.
            oauthToken: token,
            queryTimeout: timeoutMs,
            requesterFn: createRequesterFn((_service, request) => Promise.resolve(request), askOnce)
          })
        })
    })
  })
}

/** github.com's API is api.github.com; an Enterprise host's is `/api/v3` on the host. */
export const githubApi = (place: ClientPlace): string =>
  place.host === "github.com"
    ? (place.origin ?? "https://api.github.com")
    : `${place.origin ?? `https://${place.host}`}/api/v3`

const gitlabOrigin = (place: ClientPlace): string => place.origin ?? `https://${place.host}`

// Octokit logs deprecations and request failures itself; prbox reports answers, not its log.
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} }
