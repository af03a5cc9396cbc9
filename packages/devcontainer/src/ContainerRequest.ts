import type { DevcontainerConfig, RawMount } from "./Config.ts"
import { parseMountString } from "./DockerValues.ts"
import type { Mount, Refusal, Widening } from "./Policy.ts"
import { classifyBuildOptions, classifyRunArgs, type RunArg } from "./RunArgs.ts"

// What a configuration (devcontainer.json, or one entry of an image's
// metadata label) asks of its container, split three ways: what widens
// nothing and every repository gets; what widens the container or reaches
// the host, honoured only for a trusted repository; and what is not applied
// though it widens nothing (one log line each).

/** A volume as the configuration wrote it (variables not yet substituted). */
export interface RequestedVolume {
  readonly property: string
  readonly source: string | null
  readonly target: string
  readonly readOnly: boolean
}

/** What every repository gets. Values are as written: the plan substitutes variables. */
export interface ContainerOptionsRequest {
  readonly env: Readonly<Record<string, string>>
  readonly hostname: string | undefined
  readonly extraHosts: ReadonlyArray<string>
  /** Narrowing only: `no-new-privileges`. */
  readonly securityOpt: ReadonlyArray<string>
  readonly cpus: number | undefined
  readonly memoryMb: number | undefined
  readonly shmSizeMb: number | undefined
  readonly volumes: ReadonlyArray<RequestedVolume>
  /** From `build.options` `--build-arg`. */
  readonly buildArgs: Readonly<Record<string, string>>
}

export interface ContainerRequest {
  readonly options: ContainerOptionsRequest
  /** Everything that widens, as data (for a trusted repository). */
  readonly widening: Widening
  /** Each widening setting with what it does (`property` from `prefix`): left out unless trusted. */
  readonly found: ReadonlyArray<Refusal>
  /** Settings that widen nothing but are not applied, each a warning. */
  readonly notes: ReadonlyArray<string>
}

export const noOptions: ContainerOptionsRequest = {
  env: {},
  hostname: undefined,
  extraHosts: [],
  securityOpt: [],
  cpus: undefined,
  memoryMb: undefined,
  shmSizeMb: undefined,
  volumes: [],
  buildArgs: {}
}

const dockerSocket = /docker\.sock/
const socketDetail = "mounts the Docker socket"
const widens = "widens the container"
const hostStorage = "mounts storage from the host"

type Classified =
  | { readonly _tag: "Volume"; readonly source: string | null; readonly target: string; readonly readOnly: boolean }
  | { readonly _tag: "Bind"; readonly mount: Mount; readonly why: string }
  | { readonly _tag: "Widening"; readonly why: string }
  | { readonly _tag: "Unclear" }

/** A `mounts` entry: a volume (named or anonymous) is the sandbox's own; a bind reaches the host. */
export const classifyMount = (raw: RawMount): Classified => {
  const mount =
    typeof raw === "string" ? parseMountString(raw) : { readOnly: false, ...raw, source: raw.source ?? null }
  const text = typeof raw === "string" ? raw : (raw.source ?? "")
  if (dockerSocket.test(text)) {
    return mount === undefined || mount.type !== "bind" || mount.source === null
      ? { _tag: "Widening", why: socketDetail }
      : { _tag: "Bind", mount: { ...mount, type: "bind" }, why: socketDetail }
  }
  if (mount === undefined) return { _tag: "Unclear" }
  if (mount.type === "volume")
    return { _tag: "Volume", source: mount.source, target: mount.target, readOnly: mount.readOnly }
  if (mount.type === "bind" && mount.source !== null) return { _tag: "Bind", mount, why: hostStorage }
  return { _tag: "Widening", why: hostStorage }
}

const isNarrowing = (option: string) => /^no-new-privileges([:=]true)?$/.test(option)

/** The widening of a config and what every repository gets of it; `prefix` names where it came from. */
export const requestOf = (config: DevcontainerConfig, prefix = ""): ContainerRequest => {
  const found: Array<Refusal> = []
  const notes: Array<string> = []
  const add = (property: string, detail: string) => found.push({ property: `${prefix}${property}`, detail })
  const env: Record<string, string> = {}
  const buildArgs: Record<string, string> = {}
  const extraHosts: Array<string> = []
  const securityOpt: Array<string> = []
  const volumes: Array<RequestedVolume> = []
  const wideningArgs: Array<string> = []
  const buildOptions: Array<string> = []
  const mounts: Array<Mount> = []
  let hostname: string | undefined
  let cpus: number | undefined
  let memoryMb: number | undefined
  let shmSizeMb: number | undefined
  const take = (property: string, args: ReadonlyArray<RunArg>, wideningTo: Array<string>) => {
    for (const arg of args) {
      const where = `${prefix}${property}[${arg.index}]`
      if (arg._tag === "Ignored") notes.push(`${where}: ${arg.flag} is ignored: ${arg.why}`)
      else if (arg._tag === "Widening") {
        wideningTo.push(...arg.args)
        add(`${property}[${arg.index}]`, `${arg.flag} ${arg.why}`)
      } else {
        const effect = arg.effect
        if (effect._tag === "Env") env[effect.name] = effect.value
        else if (effect._tag === "BuildArg") buildArgs[effect.name] = effect.value
        else if (effect._tag === "Hostname") hostname = effect.hostname
        else if (effect._tag === "ExtraHost") extraHosts.push(effect.entry)
        else if (effect._tag === "NoNewPrivileges") securityOpt.push("no-new-privileges")
        else if (effect._tag === "Cpus") cpus = effect.cpus
        else if (effect._tag === "Memory") memoryMb = effect.mb
        else if (effect._tag === "ShmSize") shmSizeMb = effect.mb
        else if (effect._tag === "Volume") {
          volumes.push({ property: where, source: effect.source, target: effect.target, readOnly: effect.readOnly })
        }
        // Init: prbox always runs Docker's init.
      }
    }
  }
  take("runArgs", classifyRunArgs(config.runArgs ?? []), wideningArgs)
  if (config.privileged === true) add("privileged", widens)
  if (config.capAdd !== undefined && config.capAdd.length > 0) add("capAdd", widens)
  const wideningOpts = (config.securityOpt ?? []).filter((option) => !isNarrowing(option))
  for (const option of config.securityOpt ?? []) if (isNarrowing(option)) securityOpt.push("no-new-privileges")
  if (wideningOpts.length > 0) add("securityOpt", widens)
  config.mounts?.forEach((raw, index) => {
    const mount = classifyMount(raw)
    const property = `mounts[${index}]`
    if (mount._tag === "Volume") {
      volumes.push({
        property: `${prefix}${property}`,
        source: mount.source,
        target: mount.target,
        readOnly: mount.readOnly
      })
    } else if (mount._tag === "Unclear")
      notes.push(`${prefix}${property}: not understood (a mount needs a target); ignored`)
    else {
      if (mount._tag === "Bind") mounts.push(mount.mount)
      add(property, mount.why)
    }
  })
  if (config.workspaceMount !== undefined) {
    add("workspaceMount", dockerSocket.test(config.workspaceMount) ? socketDetail : hostStorage)
  }
  const appPort = config.appPort === undefined ? [] : [config.appPort].flat()
  if (appPort.length > 0) add("appPort", "publishes a port on the host")
  take("build.options", classifyBuildOptions(config.build?.options ?? []), buildOptions)
  return {
    options: { env, hostname, extraHosts, securityOpt, cpus, memoryMb, shmSizeMb, volumes, buildArgs },
    widening: {
      runArgs: wideningArgs,
      capAdd: config.capAdd ?? [],
      securityOpt: wideningOpts,
      privileged: config.privileged === true,
      mounts,
      workspaceMount: config.workspaceMount ?? null,
      appPort,
      buildOptions
    },
    found,
    notes
  }
}

/** Two requests' options together, `later` winning where only one value fits (the label's first, then devcontainer.json's). */
export const combineOptions = (
  earlier: ContainerOptionsRequest,
  later: ContainerOptionsRequest
): ContainerOptionsRequest => ({
  env: { ...earlier.env, ...later.env },
  hostname: later.hostname ?? earlier.hostname,
  extraHosts: [...new Set([...earlier.extraHosts, ...later.extraHosts])],
  securityOpt: [...new Set([...earlier.securityOpt, ...later.securityOpt])],
  cpus: later.cpus ?? earlier.cpus,
  memoryMb: later.memoryMb ?? earlier.memoryMb,
  shmSizeMb: later.shmSizeMb ?? earlier.shmSizeMb,
  // A later volume at the same target replaces the earlier one, as the spec's mounts merge.
  volumes: [
    ...earlier.volumes.filter((one) => !later.volumes.some((next) => next.target === one.target)),
    ...later.volumes
  ],
  buildArgs: { ...earlier.buildArgs, ...later.buildArgs }
})

/**
 * The refusals for `"untrustedWidening": "refuse"`, worded as before prbox
 * opened without the widening: one per property (every `runArgs` flag that
 * widens counts as `runArgs`), in the spec's order.
 */
export const refusalsOf = (request: ContainerRequest): ReadonlyArray<Refusal> => {
  const byProperty = new Map<string, string>()
  for (const { property, detail } of request.found) {
    if (property.startsWith("build.options[")) byProperty.set("build.options", "reaches the host")
    else if (!property.startsWith("runArgs[")) byProperty.set(property, detail)
    else if (byProperty.get("runArgs") !== socketDetail) {
      byProperty.set("runArgs", detail.endsWith(socketDetail) ? socketDetail : widens)
    }
  }
  return [...byProperty].map(([property, detail]) => ({ property, detail }))
}
