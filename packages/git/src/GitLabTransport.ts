import type { FormattedResponse } from "@gitbeaker/requester-utils"
import type { ServiceFailure } from "./PullAnswers.ts"

/** A GitLab refusal, with what the service said (its status, headers and message). */
export class GitLabRefusal extends Error {
  readonly failure: ServiceFailure
  constructor(failure: ServiceFailure) {
    super(`GitLab answered ${failure.status}`)
    this.name = "GitLabRefusal"
    this.failure = failure
  }
}

const messageOf = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const said = "message" in body ? body.message : "error" in body ? body.error : undefined
  return typeof said === "string" ? said : undefined
}

/**
 * Gitbeaker's request handler without its retries: its own retries a 429
 * ten times within a fraction of a second and drops `Retry-After`; a lookup
 * asks once and tells the user when to retry. The request (URL, headers,
 * query timeout's signal) is Gitbeaker's own.
 */
export const askOnce = async (endpoint: string, options?: Record<string, unknown>): Promise<FormattedResponse> => {
  const { rateLimiters: _limiters, agent: _agent, asStream: _stream, prefixUrl, searchParams, ...init } = options ?? {}
  const base = typeof prefixUrl === "string" ? (prefixUrl.endsWith("/") ? prefixUrl : `${prefixUrl}/`) : undefined
  const url = new URL(endpoint, base)
  url.search = typeof searchParams === "string" ? searchParams : ""
  const response = await fetch(url, init as RequestInit)
  const headers = Object.fromEntries(response.headers.entries())
  const json = (headers["content-type"] ?? "").split(";")[0]?.trim() === "application/json"
  const body: unknown = json ? await response.json() : await response.text()
  if (!response.ok) throw new GitLabRefusal({ status: response.status, headers, message: messageOf(body) })
  return { body: (body ?? null) as FormattedResponse["body"], headers, status: response.status }
}
