import type { DevcontainerConfig, RawMount } from "./Config.ts"

// PR content is untrusted: anyone who can open a PR writes devcontainer.json
// (and can pick the image whose metadata label is merged in). Whatever reaches
// the host or widens the container is refused unless the user's own
// config.json trusts the repository.

/** A mount as the engine hands it to Docker. */
export interface Mount {
  readonly type: string
  readonly source: string | null
  readonly target: string
  readonly readOnly: boolean
}

/** What a trusted repository may widen, as data for the engine (never `initializeCommand`). */
export interface Widening {
  readonly runArgs: ReadonlyArray<string>
  readonly capAdd: ReadonlyArray<string>
  readonly securityOpt: ReadonlyArray<string>
  readonly privileged: boolean
  readonly mounts: ReadonlyArray<Mount>
  readonly workspaceMount: string | null
  readonly appPort: ReadonlyArray<number | string>
  readonly buildOptions: ReadonlyArray<string>
}

export const noWidening: Widening = {
  runArgs: [],
  capAdd: [],
  securityOpt: [],
  privileged: false,
  mounts: [],
  workspaceMount: null,
  appPort: [],
  buildOptions: []
}

/**
 * `trustedRepositories` from the user's config.json: `host/org/repo`, or
 * `host/org/*` (a `*` stands for one whole path segment, at the end only).
 * The host compares case-insensitively, the path as written.
 */
export const isTrustedRepository = (patterns: ReadonlyArray<string>, host: string, repository: string): boolean => {
  // A plain remote's repository is its absolute path: `local/srv/git/app.git` names `/srv/git/app.git`.
  const wanted = repository.replace(/^\//, "").split("/")
  return patterns.some((pattern) => {
    const [patternHost, ...path] = pattern.split("/")
    if (patternHost === undefined || patternHost.toLowerCase() !== host.toLowerCase()) return false
    if (path.length !== wanted.length || path.length === 0) return false
    return path.every((segment, index) =>
      segment === "*" ? index === path.length - 1 && wanted[index] !== "" : segment !== "" && segment === wanted[index]
    )
  })
}

const dockerSocket = /docker\.sock/

const mountOf = (raw: RawMount): Mount | undefined => {
  if (typeof raw !== "string")
    return { type: raw.type, source: raw.source ?? null, target: raw.target, readOnly: false }
  const fields = new Map<string, string>()
  let readOnly = false
  for (const part of raw.split(",")) {
    const [key = "", ...value] = part.split("=")
    if (key === "readonly" || key === "ro") readOnly = value.length === 0 || value.join("=") !== "false"
    else fields.set(key, value.join("="))
  }
  const target = fields.get("target") ?? fields.get("dst") ?? fields.get("destination")
  if (target === undefined) return undefined
  return {
    type: fields.get("type") ?? "volume",
    source: fields.get("source") ?? fields.get("src") ?? null,
    target,
    readOnly
  }
}

/** A widening property the config sets, with why it is refused. */
export interface Refusal {
  readonly property: string
  readonly detail: string
}

const reachesHost = "reaches the host"
const widens = "widens the container"
const hostStorage = "mounts storage from the host"

/** Every widening property the config sets, in the spec's order; empty when it sets none. */
export const refusals = (config: DevcontainerConfig): ReadonlyArray<Refusal> => {
  const found: Array<Refusal> = []
  const add = (property: string, why: string) => found.push({ property, detail: why })
  if (config.runArgs !== undefined && config.runArgs.length > 0) {
    add("runArgs", config.runArgs.some((arg) => dockerSocket.test(arg)) ? "mounts the Docker socket" : widens)
  }
  if (config.privileged === true) add("privileged", widens)
  if (config.capAdd !== undefined && config.capAdd.length > 0) add("capAdd", widens)
  if (config.securityOpt !== undefined && config.securityOpt.length > 0) add("securityOpt", widens)
  config.mounts?.forEach((raw, index) => {
    const text = typeof raw === "string" ? raw : `${raw.source ?? ""}`
    add(`mounts[${index}]`, dockerSocket.test(text) ? "mounts the Docker socket" : hostStorage)
  })
  if (config.workspaceMount !== undefined) {
    add("workspaceMount", dockerSocket.test(config.workspaceMount) ? "mounts the Docker socket" : hostStorage)
  }
  const appPorts = config.appPort === undefined ? [] : [config.appPort].flat()
  if (appPorts.length > 0) add("appPort", "publishes a port on the host")
  if (config.build?.options !== undefined && config.build.options.length > 0) add("build.options", reachesHost)
  return found
}

/** The config's widening as data (for a trusted repository); a mount string without a target is left out. */
export const wideningOf = (config: DevcontainerConfig): Widening => ({
  runArgs: config.runArgs ?? [],
  capAdd: config.capAdd ?? [],
  securityOpt: config.securityOpt ?? [],
  privileged: config.privileged === true,
  mounts: (config.mounts ?? []).flatMap((raw) => mountOf(raw) ?? []),
  workspaceMount: config.workspaceMount ?? null,
  appPort: config.appPort === undefined ? [] : [config.appPort].flat(),
  buildOptions: config.build?.options ?? []
})

const union = <A>(a: ReadonlyArray<A>, b: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set([...a, ...b])]

/** Two sources' widening together (the image label's first, then devcontainer.json's). */
export const combineWidening = (a: Widening, b: Widening): Widening => ({
  runArgs: [...a.runArgs, ...b.runArgs],
  capAdd: union(a.capAdd, b.capAdd),
  securityOpt: union(a.securityOpt, b.securityOpt),
  privileged: a.privileged || b.privileged,
  mounts: [...a.mounts.filter((mount) => !b.mounts.some((later) => later.target === mount.target)), ...b.mounts],
  workspaceMount: b.workspaceMount ?? a.workspaceMount,
  appPort: union(a.appPort, b.appPort),
  buildOptions: [...a.buildOptions, ...b.buildOptions]
})

/** The refusal's text: what it does and how the user (not the PR) can allow it. */
export const refusalDetail = (refusal: Refusal, host: string, repository: string): string =>
  `refused: it ${refusal.detail}, and the repository's content is untrusted; to allow it, add "${host}/${repository}" to trustedRepositories in your config.json`

/**
 * root by name or uid, with or without a group (`root`, `0`, `0:0`, `root:root`).
 *
 * The rule on root (decided on a sample of 100 real devcontainer.json files:
 * 29 % run `sudo` in a lifecycle command, mostly `apt install`; 43 % use
 * features, which install as root at build time; 11 % name root as the
 * container's or remote user): root *inside* the container is not
 * widening, so an image's `sudo` keeps working, since what it can reach is
 * only the container, the sandbox's own workspace and home (in prbox's private
 * state folder) and no device or file capability (the engine drops MKNOD and
 * SETFCAP). Running the sandbox's own user as root is: everything the
 * sandbox writes would be root's on the host, so a `remoteUser` or
 * `containerUser` of root is honoured only for a trusted repository.
 */
export const isRootUser = (user: string): boolean => {
  const name = user.split(":")[0]?.trim()
  return name === "root" || name === "0"
}

/**
 * What prbox accepts but does not do, where a user would expect an effect.
 * (initializeCommand is skipped rather than refused: many repositories use it
 * for harmless host-side preparation, and skipping it keeps them usable while
 * nothing from the PR runs on the host either way.)
 */
export const ignoredWarnings = (config: DevcontainerConfig): ReadonlyArray<string> => [
  ...(config.initializeCommand === undefined ? [] : ["initializeCommand runs on the host; prbox never runs it"]),
  ...(config.postAttachCommand === undefined ? [] : ["postAttachCommand is not run: prbox has no attach step"]),
  ...(config.overrideCommand === false
    ? ["overrideCommand: false is not honoured: the container runs prbox's code-server command"]
    : []),
  ...(config.extensions === undefined
    ? []
    : ["extensions at the top level is deprecated; use customizations.vscode.extensions (installed all the same)"])
]
