import type { Provider } from "@prbox/domain"

/** An HTTP request that asks a code host who a token belongs to. */
export interface IdentityRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
}

/**
 * GitHub (github.com or an Enterprise host) and GitLab answer `GET …/user`
 * with the token's numeric user id. Other providers have no such call here
 * (Bitbucket's ids are not numeric; CodeCommit goes through STS).
 */
export const userRequest = (provider: Provider, host: string, token: string): IdentityRequest | undefined => {
  const authorization = `Bearer ${token}`
  switch (provider) {
    case "github":
      return {
        url: host === "github.com" ? "https://api.github.com/user" : `https://${host}/api/v3/user`,
        headers: {
          authorization,
          accept: "application/vnd.github+json",
          "user-agent": "prbox",
          "x-github-api-version": "2022-11-28"
        }
      }
    case "gitlab":
      return { url: `https://${host}/api/v4/user`, headers: { authorization, "user-agent": "prbox" } }
    default:
      return undefined
  }
}

/** The numeric id of `{ "id": 583231, ... }`, or undefined for anything else. */
export const parseUserId = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null || !("id" in body)) return undefined
  const id = body.id
  return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? String(id) : undefined
}

/** STS GetCallerIdentity's `Account`, only when it is a 12-digit AWS account id. */
export const parseCallerAccount = (output: { readonly Account?: string | undefined }): string | undefined =>
  output.Account !== undefined && /^\d{12}$/.test(output.Account) ? output.Account : undefined

/**
 * What `git credential fill` is asked for a host's token: the user's own
 * helpers answer, nothing is stored by prbox.
 */
export const credentialQuery = (host: string): string => `protocol=https\nhost=${host}\n\n`

export const parseCredentialPassword = (output: string): string | undefined =>
  output
    .split("\n")
    .find((line) => line.startsWith("password="))
    ?.slice("password=".length) || undefined
