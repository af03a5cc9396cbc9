import { Result } from "effect"

/**
 * OCI references (`registry[:port]/path/name[:tag][@sha256:…]`), read as the
 * distribution project's reference grammar and the devcontainers CLI read them.
 * Pure, and the one grammar: a feature's key is read by it (devcontainer's
 * FeatureReference.ts) and the registry client fetches what it read.
 */

export interface OciReference {
  /** `host[:port]` as the registry is asked (the host lowercased): `localhost:5000`, `[::1]:5000`. */
  readonly registry: string
  /** The path inside the registry, lowercased: `org/features/node`. */
  readonly repository: string
  /** `latest` when the reference names none. */
  readonly tag: string
  /** `sha256:<64 hex>` when the reference names one: what it resolves to must hash to it. */
  readonly digest: string | undefined
  /** Plain HTTP only for a loopback registry (as the devcontainers CLI and Docker allow); https otherwise. */
  readonly scheme: "http" | "https"
}

const MAX_NAME_LENGTH = 255

// A registry: DNS labels separated by dots, or a bracketed IPv6 address; either with a port.
const hostPattern = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/
const portPattern = /^[0-9]{1,5}$/
// A path component: lowercase alphanumerics joined by `.`, `_`, `__` or runs of `-`.
const componentPattern = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/
const tagPattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/
const digestPattern = /^sha256:[0-9a-f]{64}$/

/** Why a text is not a reference: it names no registry (a short id), or it is malformed; `detail` says what. */
export interface OciReferenceProblem {
  readonly kind: "no-registry" | "malformed"
  readonly detail: string
}

/** Hosts a registry may be asked over plain HTTP: this machine's own. */
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

/** `host` of `host[:port]` (a bracketed IPv6 address keeps its brackets). */
export const hostOf = (registry: string): string => {
  const bracketEnd = registry.indexOf("]")
  const colon = registry.indexOf(":", bracketEnd + 1)
  return colon === -1 ? registry : registry.slice(0, colon)
}

/** Whether `host[:port]` is this machine's loopback, the only place plain HTTP is allowed. */
export const isLoopback = (registry: string): boolean => LOOPBACK_HOSTS.has(hostOf(registry).toLowerCase())

/**
 * Whether the first segment of a name is a registry, as Docker decides it:
 * it has a dot or a port, or is `localhost`. Otherwise the name is a path in
 * the engine's default registry.
 */
export const namesRegistry = (segment: string): boolean =>
  segment.includes(".") || segment.includes(":") || segment === "localhost" || segment.startsWith("[")

const checkRegistry = (registry: string): string | undefined => {
  const host = hostOf(registry)
  const port = registry.slice(host.length + 1)
  if (!hostPattern.test(host)) return `"${registry}" is not a registry host`
  if (registry.length > host.length) {
    if (!portPattern.test(port) || Number(port) < 1 || Number(port) > 65_535) {
      return `"${registry}" has an invalid port`
    }
  }
  return undefined
}

/** Splits `name[:tag][@digest]`; the tag's colon is the last one after the last slash. */
const splitName = (text: string) => {
  const at = text.indexOf("@")
  const beforeDigest = at === -1 ? text : text.slice(0, at)
  const digest = at === -1 ? undefined : text.slice(at + 1)
  const colon = beforeDigest.lastIndexOf(":")
  const hasTag = colon > beforeDigest.lastIndexOf("/")
  return {
    name: hasTag ? beforeDigest.slice(0, colon) : beforeDigest,
    tag: hasTag ? beforeDigest.slice(colon + 1) : undefined,
    digest
  }
}

/**
 * Reads a reference that names its registry (a feature's: the spec has no
 * default registry). The registry host and the repository are lowercased;
 * the tag is kept as written (tags are case-sensitive). Fails with a
 * sentence naming what is wrong.
 */
export const parseOciReference = (text: string): Result.Result<OciReference, OciReferenceProblem> => {
  const trimmed = text.trim()
  const quoted = JSON.stringify(text)
  const malformed = (detail: string) => Result.fail({ kind: "malformed" as const, detail })
  if (trimmed.length === 0) return malformed("an empty reference")
  const { name, tag, digest } = splitName(trimmed)
  if (tag !== undefined && !tagPattern.test(tag)) return malformed(`${quoted}: "${tag}" is not a valid tag`)
  if (digest !== undefined && !digestPattern.test(digest)) {
    return malformed(`${quoted}: "${digest}" is not a sha256 digest (sha256: and 64 lowercase hex digits)`)
  }
  const slash = name.indexOf("/")
  const first = slash === -1 ? name : name.slice(0, slash)
  if (slash === -1 || !namesRegistry(first)) {
    return Result.fail({
      kind: "no-registry",
      detail: `${quoted} names no registry: write it as <registry>/<namespace>/<name>[:<tag>]`
    })
  }
  const registry = first.toLowerCase()
  const registryProblem = checkRegistry(registry)
  if (registryProblem !== undefined) return malformed(`${quoted}: ${registryProblem}`)
  const repository = name.slice(slash + 1).toLowerCase()
  if (repository.length === 0 || !repository.split("/").every((part) => componentPattern.test(part))) {
    return malformed(`${quoted}: "${repository}" is not a repository path (lowercase letters, digits, . _ -)`)
  }
  if (name.length > MAX_NAME_LENGTH) return malformed(`${quoted}: the name is longer than ${MAX_NAME_LENGTH}`)
  return Result.succeed({
    registry,
    repository,
    tag: tag ?? "latest",
    digest,
    scheme: isLoopback(registry) ? "http" : "https"
  })
}

/** The reference as written back: `registry/repository:tag`, `@digest` when it has one. */
export const formatReference = (reference: OciReference): string =>
  `${reference.registry}/${reference.repository}:${reference.tag}${reference.digest === undefined ? "" : `@${reference.digest}`}`

/**
 * The registry (`host[:port]`, host lowercased) an image name (`docker pull`'s
 * argument) is pulled from; undefined for a name without one, which the
 * engine pulls from its default registry.
 */
export const imageRegistry = (image: string): string | undefined => {
  const slash = image.indexOf("/")
  if (slash === -1) return undefined
  const first = image.slice(0, slash)
  // Docker also takes an uppercase first segment as a registry (repositories are lowercase).
  return namesRegistry(first) || first !== first.toLowerCase() ? first.toLowerCase() : undefined
}
