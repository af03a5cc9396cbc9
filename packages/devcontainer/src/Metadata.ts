import type { LifecycleHook } from "@prbox/domain"
import { Effect, Result } from "effect"
import type { RawLifecycleCommand } from "./Commands.ts"
import type { DevcontainerConfig } from "./Config.ts"
import { type ContainerOptionsRequest, combineOptions, noOptions, requestOf } from "./ContainerRequest.ts"
import { DevcontainerError } from "./Errors.ts"
import { mergeOptions, type Options } from "./Options.ts"
import { decodeConfig } from "./Parse.ts"
import { combineWidening, leftOutDetail, leftOutWarning, noWidening, type Refusal, type Widening } from "./Policy.ts"

/** Where the image's own configuration comes from, for warnings and step origins. */
export const labelOrigin = "image metadata"
const labelFile = "the image's devcontainer.metadata label"

const hooks: ReadonlyArray<LifecycleHook> = [
  "onCreateCommand",
  "updateContentCommand",
  "postCreateCommand",
  "postStartCommand"
]

/** A lifecycle command before variables are substituted, with where it was declared. */
export interface RawStep {
  readonly hook: LifecycleHook
  readonly command: RawLifecycleCommand
  readonly origin: string
}

/** A user name and the source that set it. */
export interface User {
  readonly name: string
  readonly origin: string
}

/** devcontainer.json merged with the image label's entries, by the spec's merge logic. */
export interface MergedConfig {
  /** Hook by hook in run order, the image's entries before devcontainer.json's. */
  readonly steps: ReadonlyArray<RawStep>
  readonly containerEnv: Readonly<Record<string, string>>
  /** null unsets a variable. */
  readonly remoteEnv: Readonly<Record<string, string | null>>
  readonly containerUser: User | undefined
  readonly remoteUser: User | undefined
  /** Union in order; a `-publisher.name` entry removes one an earlier source added. */
  readonly extensions: ReadonlyArray<string>
  readonly forwardPorts: ReadonlyArray<number | string>
  readonly portsAttributes: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  readonly cpus: number | undefined
  readonly memoryMb: number | undefined
  /** The label's widening honoured for a trusted repository (devcontainer.json's is the spec's). */
  readonly widening: Widening
  /** What the label asks that widens nothing (devcontainer.json's is the spec's). */
  readonly options: ContainerOptionsRequest
  /** The label's widening left out, each with why (none for a trusted repository). */
  readonly ignored: ReadonlyArray<Refusal>
  /** How the container runs (overrideCommand, init, users' uid, env probe, waitFor), merged as the CLI does. */
  readonly runOptions: Options
  /** Each label entry's `entrypoint` (a feature's), in order: run when the container starts, before code-server. */
  readonly entrypoints: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

const units: Record<string, number> = { "": 1 / (1024 * 1024), kb: 1 / 1024, mb: 1, gb: 1024, tb: 1024 * 1024 }

/** A spec size ("4gb", "512mb", bytes) in whole MiB, rounded up. */
export const sizeToMb = (size: string): number => {
  const match = /^(\d+)([tgmk]b)?$/i.exec(size)
  return match === null ? 0 : Math.ceil(Number(match[1]) * (units[(match[2] ?? "").toLowerCase()] ?? 0))
}

const max = (a: number | undefined, b: number | undefined) =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b)

const extensionsOf = (entry: DevcontainerConfig): ReadonlyArray<string> => [
  ...(entry.extensions ?? []),
  ...(entry.customizations?.vscode?.extensions ?? [])
]

// Strict JSON, as the devcontainers CLI reads the label (`internalGetImageMetadata0`,
// src/spec-node/imageMetadata.ts: `JSON.parse`): no comments, no recovery.
const labelJson = (label: string) =>
  Effect.try({
    try: (): unknown => JSON.parse(label),
    catch: () => new DevcontainerError({ file: labelFile, detail: "invalid JSON" })
  })

/**
 * The label entries' `entrypoint`s in order (a feature's, which devcontainer.json
 * cannot set: it is not among its properties), as the CLI's `mergeConfiguration`
 * collects them. None from a label that is ignored.
 */
const labelEntrypoints = (label: string): ReadonlyArray<string> => {
  const value = Effect.runSync(Effect.orElseSucceed(labelJson(label), () => undefined))
  const entries: ReadonlyArray<unknown> = Array.isArray(value) ? value : [value]
  return entries.flatMap((entry) => {
    const entrypoint =
      typeof entry === "object" && entry !== null ? (entry as { entrypoint?: unknown }).entrypoint : undefined
    return typeof entrypoint === "string" && entrypoint.trim() !== "" ? [entrypoint] : []
  })
}

// The label as entries: a JSON array of config snippets or a single object.
const labelEntries = (label: string, warn: (warning: string) => void): ReadonlyArray<DevcontainerConfig> => {
  const decoded = Effect.runSync(
    Effect.result(
      Effect.flatMap(labelJson(label), (value) =>
        Array.isArray(value)
          ? Effect.forEach(value, (entry, index) =>
              decodeConfig(labelFile, entry, false).pipe(
                Effect.mapError(
                  (error) =>
                    new DevcontainerError({
                      file: labelFile,
                      property: `[${index}]${error.property === undefined ? "" : `.${error.property}`}`,
                      detail: error.detail
                    })
                )
              )
            )
          : Effect.map(decodeConfig(labelFile, value, false), (entry) => [entry])
      )
    )
  )
  if (Result.isSuccess(decoded)) return decoded.success
  warn(`${decoded.failure.message}: the label is ignored (the image's own devcontainer settings are not applied)`)
  return []
}

/**
 * Merges the image's `devcontainer.metadata` label (image first) with
 * devcontainer.json: lifecycle commands collected in order, env and users
 * last-wins, extensions and forwarded ports unioned, host requirements the
 * largest asked. The label is untrusted too: its widening counts only for a
 * trusted repository (`withheld` null), else it is left out, listed with
 * `withheld` (why), and warned about; what widens nothing (volumes, harmless
 * flags) every repository gets. A malformed label is ignored with a warning.
 */
export const mergeMetadata = (
  label: string | undefined,
  config: DevcontainerConfig,
  configFile: string,
  withheld: string | null
): MergedConfig => {
  const warnings: Array<string> = []
  const warn = (warning: string) => warnings.push(warning)
  const image = label === undefined || label.trim() === "" ? [] : labelEntries(label, warn)
  let widening = noWidening
  let options = noOptions
  const ignored: Array<Refusal> = []
  image.forEach((entry, index) => {
    const request = requestOf(entry, `devcontainer.metadata[${index}].`)
    options = combineOptions(options, request.options)
    for (const note of request.notes) warn(`${labelFile}: ${note}`)
    if (withheld === null) widening = combineWidening(widening, request.widening)
    else {
      for (const found of request.found) {
        const left = { property: found.property, detail: leftOutDetail(found, withheld) }
        ignored.push(left)
        warn(leftOutWarning(labelFile, left))
      }
    }
  })
  const sources = [...image.map((entry) => ({ entry, origin: labelOrigin })), { entry: config, origin: configFile }]
  let containerUser: User | undefined
  let remoteUser: User | undefined
  let cpus: number | undefined
  let memoryMb: number | undefined
  const containerEnv: Record<string, string> = {}
  const remoteEnv: Record<string, string | null> = {}
  const extensions: Array<string> = []
  const forwardPorts: Array<number | string> = []
  const portsAttributes: Record<string, Readonly<Record<string, unknown>>> = {}
  for (const { entry, origin } of sources) {
    Object.assign(containerEnv, entry.containerEnv)
    Object.assign(remoteEnv, entry.remoteEnv)
    Object.assign(portsAttributes, entry.portsAttributes)
    if (entry.containerUser !== undefined) containerUser = { name: entry.containerUser, origin }
    if (entry.remoteUser !== undefined) remoteUser = { name: entry.remoteUser, origin }
    for (const id of extensionsOf(entry)) {
      const removed = id.startsWith("-") ? id.slice(1).toLowerCase() : undefined
      if (removed === undefined) extensions.push(id)
      else extensions.splice(0, extensions.length, ...extensions.filter((kept) => kept.toLowerCase() !== removed))
    }
    for (const port of entry.forwardPorts ?? []) if (!forwardPorts.includes(port)) forwardPorts.push(port)
    cpus = max(cpus, entry.hostRequirements?.cpus)
    const memory = entry.hostRequirements?.memory
    memoryMb = max(memoryMb, memory === undefined ? undefined : sizeToMb(memory))
  }
  const steps = hooks.flatMap((hook) =>
    sources.flatMap(({ entry, origin }) => {
      const command = entry[hook]
      return command === undefined ? [] : [{ hook, command, origin }]
    })
  )
  return {
    steps,
    runOptions: mergeOptions(sources.map(({ entry }) => entry)),
    entrypoints: image.length === 0 || label === undefined ? [] : labelEntrypoints(label),
    containerEnv,
    remoteEnv,
    containerUser,
    remoteUser,
    extensions,
    forwardPorts,
    portsAttributes,
    cpus,
    memoryMb,
    widening,
    options,
    ignored,
    warnings
  }
}
