import { Result } from "effect"

/** The local engine's socket: what Docker uses when nothing names another engine. */
export const LOCAL_ENGINE = "unix:///var/run/docker.sock"

/** config.json's `runtime.docker`: an engine address, or the name of a Docker context. */
export interface ConfiguredEngine {
  readonly host?: string | undefined
  readonly context?: string | undefined
}

/** Everything that can name the Docker engine, read from the user's config, environment and Docker's own config. */
export interface EngineSources {
  /** `$PRBOX_HOME/config.json`'s `runtime.docker`. */
  readonly configured: ConfiguredEngine | undefined
  /** The `DOCKER_HOST` environment variable. */
  readonly dockerHost: string | undefined
  /** The `DOCKER_CONTEXT` environment variable. */
  readonly dockerContext: string | undefined
  /** `currentContext` of Docker's config.json (`~/.docker/config.json`). */
  readonly currentContext: string | undefined
  /** Every Docker context found, by name: its docker endpoint's `Host`. */
  readonly contexts: ReadonlyMap<string, string>
}

/** Where the engine's address came from, as `prbox doctor` shows it. */
export type EngineSource = "config" | "DOCKER_HOST" | `context ${string}` | "default"

export interface ChosenEngine {
  readonly address: string
  readonly source: EngineSource
}

/** The one context Docker always has: the environment's engine (here: the local socket). */
const DEFAULT_CONTEXT = "default"

const SCHEMES = ["unix://", "tcp://", "ssh://"] as const

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.trim()

const checkedAddress = (address: string, where: string): Result.Result<string, string> =>
  SCHEMES.some((scheme) => address.startsWith(scheme) && address.length > scheme.length)
    ? Result.succeed(address)
    : Result.fail(`${where}: "${address}" is not a Docker engine address (unix://, tcp:// or ssh://)`)

const fromContext = (
  name: string,
  contexts: ReadonlyMap<string, string>,
  where: string
): Result.Result<ChosenEngine, string> => {
  if (name === DEFAULT_CONTEXT) return Result.succeed({ address: LOCAL_ENGINE, source: `context ${name}` })
  const host = contexts.get(name)
  if (host === undefined) {
    const known = [DEFAULT_CONTEXT, ...contexts.keys()].join(", ")
    return Result.fail(`${where} names the Docker context "${name}", which does not exist (known: ${known})`)
  }
  return Result.map(checkedAddress(host, `Docker context "${name}"`), (address) => ({
    address,
    source: `context ${name}`
  }))
}

/**
 * Which Docker engine prbox uses, first match wins: config.json's
 * `runtime.docker` (a host or a context), `DOCKER_HOST`, the current Docker
 * context (`DOCKER_CONTEXT`, else Docker's `currentContext`), the local
 * socket. Fails with a message for a context that does not exist or an
 * address prbox cannot use: never another engine than the one named.
 */
export const chooseEngine = (sources: EngineSources): Result.Result<ChosenEngine, string> => {
  const configured = sources.configured
  if (configured !== undefined) {
    const host = nonEmpty(configured.host)
    const context = nonEmpty(configured.context)
    if (host !== undefined && context !== undefined) {
      return Result.fail("runtime.docker: give either `host` or `context`, not both")
    }
    if (host !== undefined) {
      return Result.map(checkedAddress(host, "runtime.docker.host"), (address) => ({ address, source: "config" }))
    }
    if (context !== undefined) return fromContext(context, sources.contexts, "runtime.docker.context")
    return Result.fail("runtime.docker: give `host` (an engine address) or `context` (a Docker context name)")
  }
  const dockerHost = nonEmpty(sources.dockerHost)
  if (dockerHost !== undefined) {
    return Result.map(checkedAddress(dockerHost, "DOCKER_HOST"), (address) => ({ address, source: "DOCKER_HOST" }))
  }
  const envContext = nonEmpty(sources.dockerContext)
  if (envContext !== undefined) return fromContext(envContext, sources.contexts, "DOCKER_CONTEXT")
  const current = nonEmpty(sources.currentContext)
  if (current !== undefined && current !== DEFAULT_CONTEXT) {
    return fromContext(current, sources.contexts, "Docker's currentContext")
  }
  return Result.succeed({ address: LOCAL_ENGINE, source: "default" })
}

/**
 * The engine a row records: null for the local socket, so rows made before
 * engines were recorded and new local rows agree.
 */
export const rowEngine = (address: string): string | null => (address === LOCAL_ENGINE ? null : address)

/** The address of the engine a row records. */
export const engineAddress = (engine: string | null): string => engine ?? LOCAL_ENGINE
