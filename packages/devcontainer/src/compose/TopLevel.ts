import { type Finding, inRepository, isRecord } from "./ComposeValues.ts"

// The project's top-level `networks`, `volumes`, `secrets` and `configs`.
// An external one, or one with a fixed name, is something outside the
// project (another sandbox's, the host's): an untrusted repository gets a
// project-local one instead. A volume driver's options can bind any host
// folder; a secret or config file outside the repository is the host's.

export interface TopLevelResult {
  readonly untrusted: Readonly<Record<string, unknown>>
  readonly trusted: Readonly<Record<string, unknown>>
  readonly widening: ReadonlyArray<Finding>
  readonly refusal?: Finding
  /** Names an untrusted repository's services lose (a secret or config left out). */
  readonly removed: ReadonlySet<string>
}

export type TopLevelKind = "networks" | "volumes" | "secrets" | "configs"

const KNOWN: Readonly<Record<TopLevelKind, ReadonlySet<string>>> = {
  networks: new Set([
    "driver",
    "driver_opts",
    "attachable",
    "enable_ipv6",
    "ipam",
    "internal",
    "labels",
    "external",
    "name"
  ]),
  volumes: new Set(["driver", "driver_opts", "external", "labels", "name"]),
  secrets: new Set([
    "file",
    "environment",
    "content",
    "external",
    "name",
    "labels",
    "driver",
    "driver_opts",
    "template_driver"
  ]),
  configs: new Set(["file", "environment", "content", "external", "name", "labels", "template_driver"])
}

const OWN_DRIVERS: Readonly<Record<"networks" | "volumes", ReadonlyArray<unknown>>> = {
  networks: [undefined, "bridge", "default"],
  volumes: [undefined, "local"]
}

/**
 * One kind of the rendered project's top level. `projectName`: the name the
 * rendering ran under (Compose v2 prints `name: <project>_<key>` for each
 * network and volume; that one is the project's own).
 */
export const topLevelRule = (
  kind: TopLevelKind,
  value: unknown,
  root: string,
  projectName: string | undefined
): TopLevelResult => {
  const untrusted: Record<string, unknown> = {}
  const trusted: Record<string, unknown> = {}
  const widening: Array<Finding> = []
  const removed = new Set<string>()
  if (value === undefined || value === null) return { untrusted, trusted, widening, removed }
  if (!isRecord(value))
    return { untrusted, trusted, widening, removed, refusal: { property: kind, detail: "expected a mapping" } }
  for (const [key, raw] of Object.entries(value)) {
    const at = `${kind}.${key}`
    const entry = raw === null ? {} : raw
    if (!isRecord(entry))
      return { untrusted, trusted, widening, removed, refusal: { property: at, detail: "expected a mapping" } }
    const unknown = Object.keys(entry).find((option) => !KNOWN[kind].has(option) && !option.startsWith("x-"))
    if (unknown !== undefined) {
      return {
        untrusted,
        trusted,
        widening,
        removed,
        refusal: { property: `${at}.${unknown}`, detail: `is not a Compose ${kind.slice(0, -1)} key prbox knows` }
      }
    }
    const left: Array<Finding> = []
    const own: Record<string, unknown> = {}
    for (const [option, setting] of Object.entries(entry)) if (!option.startsWith("x-")) own[option] = setting
    const isOwnName = projectName !== undefined && entry.name === `${projectName}_${key}`
    if (isOwnName) delete own.name
    trusted[key] = { ...own }
    if (entry.external !== undefined && entry.external !== false) {
      left.push({ property: `${at}.external`, detail: `uses a ${kind.slice(0, -1)} outside the project` })
      delete own.external
      delete own.name
    }
    if (kind === "networks" || kind === "volumes") {
      if (own.name !== undefined) {
        left.push({ property: `${at}.name`, detail: `names a ${kind.slice(0, -1)} outside the project` })
        delete own.name
      }
      if (!OWN_DRIVERS[kind].includes(own.driver)) {
        left.push({ property: `${at}.driver`, detail: "uses a driver that reaches the host" })
        delete own.driver
      }
      if (isRecord(own.driver_opts) && Object.keys(own.driver_opts).length > 0) {
        left.push({ property: `${at}.driver_opts`, detail: "sets driver options (a volume's can bind a host folder)" })
        delete own.driver_opts
      }
    } else {
      const file = own.file
      const outside = file !== undefined && (typeof file !== "string" || inRepository(root, file) === undefined)
      if (outside) left.push({ property: `${at}.file`, detail: "reads a file outside the repository" })
      if (outside || left.length > 0) {
        removed.add(key)
        widening.push(...left)
        continue
      }
    }
    widening.push(...left)
    untrusted[key] = own
  }
  return { untrusted, trusted, widening, removed }
}
