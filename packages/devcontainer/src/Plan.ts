import type { EnvironmentPlan, LifecycleCommand, LifecycleStep, SingleCommand } from "@prbox/domain"
import { toLifecycleCommand } from "./Commands.ts"
import { mergeMetadata } from "./Metadata.ts"
import { combineWidening, isRootUser, type Widening } from "./Policy.ts"
import type { DevcontainerSpec } from "./Resolve.ts"
import { substitute, substituteRecord, type VariableContext } from "./Variables.ts"

/** The image's facts the plan depends on (from inspecting it). */
export interface ImageFacts {
  readonly metadataLabel: string | undefined
  /** The image's USER; "" when it sets none (Docker's default, root). */
  readonly user: string
  readonly env: Readonly<Record<string, string>>
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
 * steps in run order and the extensions to install.
 */
export const planEnvironment = (
  spec: DevcontainerSpec,
  image: string,
  facts: ImageFacts,
  limits: Limits,
  hostCpus: number,
  hostMemoryMb: number
): PlannedEnvironment => {
  const merged = mergeMetadata(facts.metadataLabel, spec.config, spec.path, spec.trusted)
  const warnings = [...merged.warnings]
  const warn = (warning: string) => warnings.push(warning)
  const early: VariableContext = {
    containerWorkspaceFolder: spec.workspaceFolder,
    workspaceBasename: spec.repositoryName
  }
  const containerEnv = substituteRecord(merged.containerEnv, early, "containerEnv", warn)
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
  const plan: EnvironmentPlan = {
    image,
    containerEnv,
    remoteEnv,
    remoteUser,
    workspaceFolder: spec.workspaceFolder,
    forwardPorts: merged.forwardPorts,
    portsAttributes: merged.portsAttributes,
    cpus: capped(merged.cpus, limits.cpus, hostCpus, "hostRequirements.cpus", " CPUs", warn),
    memoryMb: capped(merged.memoryMb, limits.memoryMb, hostMemoryMb, "hostRequirements.memory", " MB", warn),
    extensions,
    steps
  }
  return {
    plan,
    warnings,
    runAsRoot: root && spec.trusted,
    trusted: spec.trusted ? combineWidening(merged.widening, spec.widening) : null
  }
}
