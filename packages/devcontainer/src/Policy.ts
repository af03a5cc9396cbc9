import type { DevcontainerConfig } from "./Config.ts"

// PR content is untrusted: anyone who can open a PR writes devcontainer.json
// (and can pick the image whose metadata label is merged in). Whatever reaches
// the host or widens the container is left out (or, with config.json's
// `"untrustedWidening": "refuse"`, refused) unless the user's own config.json
// trusts the repository.

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

/** A widening property the config sets, with what it does. */
export interface Refusal {
  readonly property: string
  readonly detail: string
}

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

/** The `trustedRepositories` entry naming exactly this repository (a plain remote's path without its leading "/"). */
export const trustedEntry = (host: string, repository: string): string => `${host}/${repository.replace(/^\//, "")}`

/** The refusal's text (`"untrustedWidening": "refuse"`): what it does and how the user (not the PR) can allow it. */
export const refusalDetail = (refusal: Refusal, host: string, repository: string): string =>
  `refused: it ${refusal.detail}, and the repository's content is untrusted; to allow it, add "${trustedEntry(host, repository)}" to trustedRepositories in your config.json`

/** Why an untrusted repository's widening is left out, and the `trustedRepositories` entry that would honour it. */
export const untrustedHint = (host: string, repository: string): string =>
  `the repository is not trusted: adding "${trustedEntry(host, repository)}" to trustedRepositories in your config.json honours it`

/** A left-out setting's detail: what it does, then why it was left out. */
export const leftOutDetail = (refusal: Refusal, hint: string): string => `${refusal.detail}; ${hint}`

/** The log line of a left-out setting (`where`: the file or the image label). */
export const leftOutWarning = (where: string, refusal: Refusal): string =>
  `${where}: ${refusal.property} is left out: ${refusal.detail}`

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
  ...(config.extensions === undefined
    ? []
    : ["extensions at the top level is deprecated; use customizations.vscode.extensions (installed all the same)"])
]
