import { isPreviewServiceName, type ReachableService } from "@prbox/domain"
import type { ComposeProject } from "./ComposeTypes.ts"

// Which of a checked project's other services the app's container reaches by
// name (previews dial them from there), with the TCP ports each declares.

/** A range wider than this (`8000-9000`) is not listed port by port. */
const MAX_RANGE = 64

type Entry = Readonly<Record<string, unknown>>

const isEntry = (value: unknown): value is Entry => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The project networks a service joins, where Compose gives it its name as an
 * alias: its `networks` (list or mapping), else `default`; none with a
 * `network_mode` (`none`, `bridge`, another service's or container's).
 */
const networksOf = (service: Entry): ReadonlySet<string> => {
  if (service.network_mode !== undefined) return new Set()
  const { networks } = service
  if (networks === undefined) return new Set(["default"])
  if (Array.isArray(networks)) return new Set(networks.filter((name): name is string => typeof name === "string"))
  return isEntry(networks) ? new Set(Object.keys(networks)) : new Set()
}

/** `3000`, `3000/tcp`, `8000-8002`: the TCP ports, none for another protocol or something unreadable. */
const portsOfSpec = (text: string): ReadonlyArray<number> => {
  const match = /^([0-9]{1,5})(?:-([0-9]{1,5}))?(?:\/(tcp|udp|sctp))?$/.exec(text)
  if (match === null || (match[3] !== undefined && match[3] !== "tcp")) return []
  const first = Number(match[1])
  const last = match[2] === undefined ? first : Number(match[2])
  if (first < 1 || last > 65535 || last < first || last - first >= MAX_RANGE) return []
  return Array.from({ length: last - first + 1 }, (_, index) => first + index)
}

/** A `ports` entry's target: the short form's last part (`[ip:][published:]target[/protocol]`) or the long form's. */
const portTargets = (entry: unknown): ReadonlyArray<number> => {
  if (typeof entry === "number") return portsOfSpec(String(entry))
  if (typeof entry === "string") return portsOfSpec(entry.slice(entry.lastIndexOf(":") + 1))
  if (!isEntry(entry)) return []
  const { target, protocol } = entry
  if (typeof target !== "number" && typeof target !== "string") return []
  return portsOfSpec(typeof protocol === "string" ? `${target}/${protocol}` : String(target))
}

const listOf = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** A service's declared TCP ports (`ports` targets, `expose`), ascending, each once. */
const declaredPorts = (service: Entry): ReadonlyArray<number> => {
  const exposed = listOf(service.expose).flatMap((entry) =>
    typeof entry === "string" || typeof entry === "number" ? portsOfSpec(String(entry)) : []
  )
  const ports = new Set([...listOf(service.ports).flatMap(portTargets), ...exposed])
  return [...ports].sort((a, b) => a - b)
}

/**
 * The services of `started` other than `app` that share a project network
 * with it and have a name previews may dial (`isPreviewServiceName`), in
 * `started`'s order, each with its declared ports.
 */
export const reachableServices = (
  project: ComposeProject,
  app: string,
  started: ReadonlyArray<string>
): Array<ReachableService> => {
  const own = project.services[app]
  const appNetworks = own === undefined ? new Set<string>() : networksOf(own)
  return started.flatMap((name) => {
    const service = project.services[name]
    if (name === app || service === undefined || !isPreviewServiceName(name)) return []
    const shared = [...networksOf(service)].some((network) => appNetworks.has(network))
    return shared ? [{ service: name, ports: declaredPorts(service) }] : []
  })
}
