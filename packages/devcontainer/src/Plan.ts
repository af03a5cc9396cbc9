import type {
  ContainerOptions,
  EnvironmentPlan,
  IgnoredSetting,
  LifecycleCommand,
  LifecycleStep,
  SingleCommand
} from "@prbox/domain"
import { toLifecycleCommand } from "./Commands.ts"
import { combineOptions } from "./ContainerRequest.ts"
import { mergeMetadata } from "./Metadata.ts"
import { planOptions } from "./Options.ts"
import { combineWidening, isRootUser, leftOutWarning, type Widening } from "./Policy.ts"
import type { DevcontainerSpec } from "./Resolve.ts"
import { substitute, substituteRecord, type VariableContext } from "./Variables.ts"
import { planVolumes } from "./Volumes.ts"

/** The image's facts the plan depends on (from inspecting it). */
export interface ImageFacts {
  readonly metadataLabel: string | undefined
  /** The image's USER; "" when it sets none (Docker's default, root). */
  readonly user: string
  readonly env: Readonly<Record<string, string>>
  /** The image's ENTRYPOINT and CMD (what `overrideCommand: false` runs). */
  readonly entrypoint?: ReadonlyArray<string>
  readonly cmd?: ReadonlyArray<string>
}

/** The user's own caps from config.json. */
export interface Limits {
  readonly cpus?: number
  readonly memoryMb?: number
}

/** The plan with what the engine decides beyond it. */
export interface PlannedEnvironment {
  readonly plan: EnvironmentPlan
  /** Warnings found here (the spec's own were reported when it was read). */
  readonly warnings: ReadonlyArray<string>
  /** A trusted repository asked for root: the container may run as root. */
  readonly runAsRoot: boolean
  /** A trusted repository's widening (devcontainer.json's and the image label's) for the engine; null when untrusted. */
  readonly trusted: Widening | null
  /** What was left out (devcontainer.json's, the label's, volumes over prbox's folders), each with why. */
  readonly ignored: ReadonlyArray<IgnoredSetting>
  /** The remote user whose uid the engine maps to the workspace owner's (`updateRemoteUserUID`), or null. */
  readonly mapUser: string | null
}

const extensionId = /^[a-z0-9][a-z0-9-]*\.[a-z0-9][a-z0-9-]*(@[0-9a-z][0-9a-z.+-]*)?$/i

// A PR may ask for less than the user's cap, never more; and never more than the machine has.
const capped = (
  asked: number | undefined,
  limit: number | undefined,
  host: number,
  property: string,
  unit: string,
  warn: (warning: string) => void
): number | null => {
  if (asked === undefined) return limit ?? null
  let value = asked
  if (limit !== undefined && limit < value) {
    warn(`${property} asks for ${asked}${unit}; capped at your limit of ${limit}${unit}`)
    value = limit
  }
  if (host < asked) {
    warn(`${property} asks for ${asked}${unit}, but this machine has ${host}${unit}`)
    value = Math.min(value, host)
  }
  return value
}

/** A command with `rewrite` applied to each of its strings (`where` names the hook, and the entry). */
const rewriteCommand = (
  command: LifecycleCommand,
  where: string,
  rewrite: (value: string, where: string) => string
): LifecycleCommand => {
  const single = (one: SingleCommand, at: string): SingleCommand =>
    one._tag === "Shell"
      ? { _tag: "Shell", command: rewrite(one.command, at) }
      : { _tag: "Exec", argv: one.argv.map((arg) => rewrite(arg, at)) }
  return command._tag === "Parallel"
    ? {
        _tag: "Parallel",
        entries: command.entries.map((entry) => ({
          name: entry.name,
          command: single(entry.command, `${where}.${entry.name}`)
        }))
      }
    : single(command, where)
}

// Nothing to run: an empty string or an empty object.
const isEmpty = (command: LifecycleCommand) =>
  command._tag === "Parallel" ? command.entries.length === 0 : command._tag === "Shell" && command.command.trim() === ""

/**
 * The environment a sandbox gets: devcontainer.json merged with the image's
 * metadata label, variables resolved (never from the host's environment),
 * users (never root unless trusted), limits capped by the user's, lifecycle
 * steps in run order, the extensions to install, and the container options
 * that widen nothing (volumes over `reserved`, prbox's own folders, left out).
 */
export const planEnvironment = (
  spec: DevcontainerSpec,
  image: string,
  facts: ImageFacts,
  limits: Limits,
  hostCpus: number,
  hostMemoryMb: number,
  reserved: ReadonlyArray<string> = [],
  /** `${devcontainerId}` (DevcontainerId.ts); left as written when absent. */
  devcontainerId?: string
): PlannedEnvironment => {
  const merged = mergeMetadata(facts.metadataLabel, spec.config, spec.path, spec.withheld)
  const options = combineOptions(merged.options, spec.options)
  const warnings = [...merged.warnings]
  const warn = (warning: string) => warnings.push(warning)
  const early: VariableContext = {
    containerWorkspaceFolder: spec.workspaceFolder,
    workspaceBasename: spec.repositoryName,
    ...(devcontainerId === undefined ? {} : { devcontainerId })
  }
  // runArgs' `-e` after containerEnv, as `docker run` takes them.
  const containerEnv = {
    ...substituteRecord(merged.containerEnv, early, "containerEnv", warn),
    ...substituteRecord(options.env, early, "runArgs", warn)
  }
  const context: VariableContext = { ...early, containerEnv: { ...facts.env, ...containerEnv } }
  const remoteEnv = Object.fromEntries(
    Object.entries(substituteRecord(merged.remoteEnv, context, "remoteEnv", warn)).flatMap(([key, value]) =>
      value === null ? [] : [[key, value]]
    )
  )
  const asked = merged.remoteUser ?? merged.containerUser
  const root = asked !== undefined && isRootUser(asked.name)
  if (root && !spec.trusted) {
    warn(`${asked.origin}: the root user is not honoured: the sandbox runs as its non-root workspace owner`)
  }
  const imageUser = facts.user === "" || isRootUser(facts.user) ? null : facts.user
  const remoteUser = root ? (spec.trusted ? asked.name : null) : (asked?.name ?? imageUser)
  const { containerUser } = merged
  // One user runs everything in a sandbox: code-server is the container's main process.
  if (containerUser !== undefined && merged.remoteUser !== undefined && containerUser.name !== merged.remoteUser.name) {
    warn(
      `${containerUser.origin}: containerUser is not a second user here: the container's processes run as the remote user (the workspace owner)`
    )
  }
  const run = planOptions(merged.runOptions, remoteUser, facts, spec.source._tag === "Compose")
  warnings.push(...run.warnings)
  const steps: Array<LifecycleStep> = merged.steps.flatMap((step) => {
    const command = rewriteCommand(toLifecycleCommand(step.command), step.hook, (value, where) =>
      substitute(value, context, where, warn)
    )
    return isEmpty(command) ? [] : [{ hook: step.hook, command, origin: step.origin }]
  })
  const seen = new Set<string>()
  const extensions = merged.extensions.filter((id) => {
    if (!extensionId.test(id)) {
      warn("customizations.vscode.extensions: an entry that is not a publisher.name id is skipped")
      return false
    }
    const key = id.toLowerCase()
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  const planned = planVolumes(options.volumes, context, spec.workspaceFolder, reserved, warn)
  for (const left of planned.ignored) warn(leftOutWarning(spec.path, left))
  const cpus = options.cpus ?? merged.cpus
  const memoryMb = options.memoryMb ?? merged.memoryMb
  const shmSizeMb =
    options.shmSizeMb === undefined
      ? null
      : capped(options.shmSizeMb, limits.memoryMb, hostMemoryMb, "runArgs --shm-size", " MB", warn)
  const container: ContainerOptions = {
    ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
    extraHosts: options.extraHosts,
    securityOpt: options.securityOpt,
    ...(shmSizeMb === null ? {} : { shmSizeMb }),
    volumes: planned.volumes
  }
  const asksAny =
    options.hostname !== undefined ||
    shmSizeMb !== null ||
    container.extraHosts.length + container.securityOpt.length + container.volumes.length > 0
  const plan: EnvironmentPlan = {
    image,
    containerEnv,
    remoteEnv,
    remoteUser,
    workspaceFolder: spec.workspaceFolder,
    forwardPorts: merged.forwardPorts,
    portsAttributes: merged.portsAttributes,
    cpus: capped(
      cpus,
      limits.cpus,
      hostCpus,
      options.cpus === undefined ? "hostRequirements.cpus" : "runArgs --cpus",
      " CPUs",
      warn
    ),
    memoryMb: capped(
      memoryMb,
      limits.memoryMb,
      hostMemoryMb,
      options.memoryMb === undefined ? "hostRequirements.memory" : "runArgs --memory",
      " MB",
      warn
    ),
    extensions,
    steps,
    ...(merged.entrypoints.length === 0 ? {} : { entrypoints: merged.entrypoints }),
    ...(asksAny ? { container } : {}),
    ...run.plan
  }
  return {
    plan,
    warnings,
    runAsRoot: root && spec.trusted,
    trusted: spec.trusted ? combineWidening(merged.widening, spec.widening) : null,
    ignored: [...spec.ignored, ...merged.ignored, ...planned.ignored],
    mapUser: run.mapUser
  }
}
