import { isLoopback } from "@prbox/domain"
import type { Credentials, CredentialsUnavailable } from "@prbox/registry"
import { Context, type Effect } from "effect"
import type { InvalidConfig } from "./Errors.ts"

/** The user's credentials for one registry (`host[:port]`), for one pull or fetch; never stored or shown. */
export interface RegistryLogin {
  readonly registry: string
  readonly credentials: Credentials
}

/** How prbox may ask a registry: anonymously, or with the user's login when config.json allows it. */
export interface RegistryAccess {
  /** `host[:port]`; undefined for an image name without one (the engine's default registry). */
  readonly registry: string | undefined
  /** Whether config.json's `registryCredentials` lists it. */
  readonly listed: boolean
  /** Only for a listed registry whose credentials the user's Docker config keeps. */
  readonly login: RegistryLogin | undefined
}

export interface RegistryAuthShape {
  /**
   * The access for a registry (`host[:port]`, as in a feature's reference):
   * the user's Docker credentials only when config.json's
   * `registryCredentials` lists it; any other registry is asked anonymously,
   * and its credentials are never even looked up.
   */
  readonly forRegistry: (registry: string) => Effect.Effect<RegistryAccess, CredentialsUnavailable | InvalidConfig>
  /** The same for the registry an image's name pulls from (none for a name without one). */
  readonly forImage: (image: string) => Effect.Effect<RegistryAccess, CredentialsUnavailable | InvalidConfig>
}

/** Which credentials a pull or a feature fetch may use (node/NodeRegistryAuth.ts). */
export class RegistryAuth extends Context.Service<RegistryAuth, RegistryAuthShape>()("prbox/engine/RegistryAuth") {}

/** Whether `registry` is one of config.json's `registryCredentials` (compared without case). */
export const isListed = (registry: string, listed: ReadonlyArray<string>): boolean =>
  listed.some((entry) => entry.toLowerCase() === registry.toLowerCase())

/**
 * Whether a registry's (or the engine's) refusal reads as wanting
 * credentials: 401/403, "unauthorized", "denied", "no basic auth credentials".
 */
export const refusedForCredentials = (detail: string): boolean =>
  /\b(401|403)\b|unauthori[sz]ed|authentication required|no basic auth credentials|denied/i.test(detail)

/** What the user can do when a registry refused for want of credentials: which setting, or which login. */
export const accessHint = (access: RegistryAccess): string => {
  if (access.registry === undefined) {
    return "to use your Docker credentials, name the image with its registry and add that registry to registryCredentials in config.json"
  }
  if (!access.listed) {
    return `if ${access.registry} needs your Docker credentials, add "${access.registry}" to registryCredentials in config.json`
  }
  if (access.login === undefined) {
    return `${access.registry} is in registryCredentials but your Docker config keeps no credentials for it (docker login ${access.registry})`
  }
  return `${access.registry} refused the credentials your Docker config keeps for it`
}

/**
 * Why a pull request's feature or image may not come from `host`
 * (`host[:port]`): it is on this machine and config.json's `localRegistries`
 * does not list it (a PR must not make prbox reach the services you run
 * locally). undefined: it may. The user's own configured image is not held to this.
 */
export const localRegistryRefusal = (host: string, localRegistries: ReadonlyArray<string>): string | undefined =>
  isLoopback(host) && !isListed(host, localRegistries)
    ? `${host} is on this machine: a pull request's features and images come from it only when config.json's localRegistries lists it`
    : undefined
