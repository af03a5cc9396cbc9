import type { SandboxVolume } from "@prbox/domain"
import type { RequestedVolume } from "./ContainerRequest.ts"
import { containerFolder } from "./Paths.ts"
import type { Refusal } from "./Policy.ts"
import { substitute, type VariableContext } from "./Variables.ts"

// A volume the configuration asks for (`mounts` of type volume, a `runArgs`
// volume) is not widening: the engine makes it for the sandbox alone (its
// name derived from the sandbox's id and the source), labels it as the
// sandbox's and removes it with the sandbox. Two things keep it from
// prbox's own folders: a target over one of them is left out.

/** Docker's volume names, and the part of a sandbox volume's name the source becomes. */
const volumeSource = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/

const within = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`)

/**
 * Why `target` may not be a volume's: it is `workspaceFolder`, a folder
 * above it or above one of prbox's `reserved` folders, or inside one of
 * those (inside the workspace is fine: a `node_modules` volume is common).
 */
export const reservedTarget = (
  target: string,
  workspaceFolder: string,
  reserved: ReadonlyArray<string>
): string | undefined => {
  for (const folder of [workspaceFolder, ...reserved]) {
    if (within(folder, target)) return `mounts over ${folder}, which prbox mounts itself`
  }
  const inside = reserved.find((folder) => within(target, folder))
  return inside === undefined ? undefined : `mounts inside ${inside}, which prbox mounts itself`
}

export interface PlannedVolumes {
  readonly volumes: ReadonlyArray<SandboxVolume>
  /** Volumes over prbox's own folders: left out, for every repository. */
  readonly ignored: ReadonlyArray<Refusal>
}

/** The requested volumes, variables substituted, checked; one that cannot be made is a warning. */
export const planVolumes = (
  requested: ReadonlyArray<RequestedVolume>,
  context: VariableContext,
  workspaceFolder: string,
  reserved: ReadonlyArray<string>,
  warn: (warning: string) => void
): PlannedVolumes => {
  const volumes: Array<SandboxVolume> = []
  const ignored: Array<Refusal> = []
  for (const volume of requested) {
    const source = volume.source === null ? null : substitute(volume.source, context, volume.property, warn)
    const target = containerFolder(substitute(volume.target, context, volume.property, warn))
    if (target === undefined) {
      warn(`${volume.property}: the target is not an absolute folder in the container; the volume is not made`)
      continue
    }
    if (source !== null && !volumeSource.test(source)) {
      warn(`${volume.property}: the source is not a volume name (letters, digits, "_.-"); the volume is not made`)
      continue
    }
    const why = reservedTarget(target, workspaceFolder, reserved)
    if (why !== undefined) ignored.push({ property: volume.property, detail: why })
    else volumes.push({ source, target, readOnly: volume.readOnly })
  }
  return { volumes, ignored }
}
