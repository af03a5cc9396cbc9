import { Context, type Effect, Redacted } from "effect"
import { Base64 } from "effect/encoding"
import type { CredentialsUnavailable } from "./RegistryError.ts"

/**
 * A user's credentials for one registry, as Docker keeps them: a user name
 * and password (or a personal token used as one), or an identity token (an
 * OAuth refresh token, exchanged for a registry token). Secrets stay
 * `Redacted`: printed or logged they show as `<redacted>`.
 */
export type Credentials =
  | { readonly _tag: "Password"; readonly username: string; readonly password: Redacted.Redacted<string> }
  | { readonly _tag: "IdentityToken"; readonly token: Redacted.Redacted<string> }

export const passwordCredentials = (username: string, password: string): Credentials => ({
  _tag: "Password",
  username,
  password: Redacted.make(password, { label: "registry password" })
})

export const identityTokenCredentials = (token: string): Credentials => ({
  _tag: "IdentityToken",
  token: Redacted.make(token, { label: "registry identity token" })
})

/** `Authorization: Basic …` for password credentials; undefined for an identity token (it only buys tokens). */
export const basicAuthorization = (credentials: Credentials): string | undefined =>
  credentials._tag === "Password"
    ? `Basic ${Base64.encode(`${credentials.username}:${Redacted.value(credentials.password)}`)}`
    : undefined

export interface RegistryCredentialsShape {
  /**
   * The user's Docker credentials for `registry` (`host[:port]`): Docker's
   * config.json (`DOCKER_CONFIG`, else `~/.docker`): `credHelpers[registry]`,
   * else `credsStore` (a `docker-credential-<name> get` run with the
   * registry on stdin), else `auths[registry]`. Undefined when none are
   * kept for it; CredentialsUnavailable when they cannot be read. Ask only
   * for registries the user allowed: the answer holds their secrets.
   */
  readonly forRegistry: (registry: string) => Effect.Effect<Credentials | undefined, CredentialsUnavailable>
}

/** The user's Docker credentials (node/NodeRegistryCredentials.ts reads them on Node). */
export class RegistryCredentials extends Context.Service<RegistryCredentials, RegistryCredentialsShape>()(
  "prbox/registry/RegistryCredentials"
) {}
