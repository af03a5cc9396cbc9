import { Schema } from "effect"
import { portKey } from "./PortKey.ts"

/*
 * Previews of a Compose sandbox's other services: the app's container dials
 * `<service>:<port>` on the project's network, by the service's name. What a
 * preview may name is decided here, on the host's own record of the project
 * (never on anything the container says).
 *
 * Addresses (the app's own ports keep theirs):
 *   host form  http://<port>.<service>.<id>.localhost:<previewPort>/   (four labels; the app's has three)
 *   path form  http://localhost:<previewPort>/s/<id>/<service>:<port>/ (the app's segment is digits only)
 */

/**
 * A service name a preview may dial: one DNS label in lowercase, starting
 * with a letter (so never an address: no dots or colons, never digits a
 * resolver reads as an IPv4 number such as `2130706433` or `0x7f000001`),
 * and not `localhost` (the app's own loopback). Compose allows more
 * (`[a-zA-Z0-9._-]`); a service named otherwise has no previews.
 */
const SERVICE_NAME = /^[a-z][a-z0-9_-]{0,62}$/

export const isPreviewServiceName = (name: string): boolean => SERVICE_NAME.test(name) && name !== "localhost"

/** Another service of the sandbox's Compose project the app reaches by name, with the ports its configuration declares. */
export const ReachableService = Schema.Struct({
  service: Schema.String,
  /** Its `ports` targets and `expose` entries (TCP), ascending. */
  ports: Schema.Array(Schema.Int)
})
export type ReachableService = typeof ReachableService.Type

/**
 * Why `service` cannot be previewed in a sandbox whose app reaches
 * `reachable` (`app` is the sandbox's own service; undefined: a sandbox
 * without Compose, or made before service previews), or undefined when it can.
 */
export const serviceRefusal = (
  service: string,
  app: string | undefined,
  reachable: ReadonlyArray<ReachableService> | undefined
): string | undefined => {
  if (!isPreviewServiceName(service)) return "it is not a service name previews can reach"
  if (app === undefined) return "the sandbox has no Compose services"
  if (service === app) return "it is the sandbox's own container: its ports need no service"
  if (reachable === undefined) return "the sandbox was made before service previews: `prbox rebuild` gives it them"
  if (reachable.some((entry) => entry.service === service)) return undefined
  const names = reachable.map((entry) => entry.service)
  return names.length === 0
    ? "the app reaches no other service by name"
    : `the app reaches only ${names.join(", ")} by name`
}

/** The host-form label pair of a service's port: `<port>.<service>`. */
export const serviceHostLabels = (port: number, service: string | undefined): string =>
  service === undefined ? String(port) : `${port}.${service}`

/** A devcontainer.json `forwardPorts` entry naming another service's port (`"db:5432"`), as the spec allows. */
export const forwardedServicePort = (
  entry: number | string
): { readonly service: string; readonly port: number } | undefined => {
  if (typeof entry !== "string") return undefined
  const match = /^([^:]+):([1-9][0-9]{0,4})$/.exec(entry)
  if (match === null) return undefined
  const [, service = "", portText = ""] = match
  const port = Number(portText)
  return port <= 65535 && isPreviewServiceName(service) ? { service, port } : undefined
}

/** What devcontainer.json says about ports (Preview.ts's `DevcontainerPorts`, as the environment plan keeps it). */
interface PortsDeclaration {
  readonly forwardPorts: ReadonlyArray<number | string>
  readonly portsAttributes: Readonly<Record<string, Readonly<Record<string, unknown>>>>
}

/** A port of another service the configuration names, listening or not. */
export interface DeclaredServicePort {
  readonly service: string
  readonly port: number
  readonly label: string | null
  /** `devcontainer`: a `"service:port"` entry of `forwardPorts`; `compose`: the service's `ports` or `expose`. */
  readonly source: "devcontainer" | "compose"
  readonly onAutoForward: string | null
}

const textOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null)

/**
 * The other services' ports a sandbox lists: `forwardPorts`' `"service:port"`
 * entries of services the app reaches (label and onAutoForward from
 * `portsAttributes["service:port"]`), then each reachable service's declared
 * ports; each once, at its first place.
 */
export const declaredServicePorts = (
  reachable: ReadonlyArray<ReachableService>,
  devcontainer: PortsDeclaration
): Array<DeclaredServicePort> => {
  const known = new Set(reachable.map((entry) => entry.service))
  const declared = new Map<string, DeclaredServicePort>()
  for (const entry of devcontainer.forwardPorts) {
    const named = forwardedServicePort(entry)
    if (named === undefined || !known.has(named.service)) continue
    const key = portKey(named.port, named.service)
    if (declared.has(key)) continue
    const attributes = devcontainer.portsAttributes[key] ?? {}
    const label = textOrNull(attributes.label)
    declared.set(key, { ...named, label, source: "devcontainer", onAutoForward: textOrNull(attributes.onAutoForward) })
  }
  for (const { service, ports } of reachable) {
    for (const port of ports) {
      const key = portKey(port, service)
      if (!declared.has(key)) declared.set(key, { service, port, label: null, source: "compose", onAutoForward: null })
    }
  }
  return [...declared.values()]
}

/** The other services' ports as listed (Preview.ts's `PreviewPort`s): `listening` and `public` hold `portKey`s. */
export const servicePreviewPorts = (
  declared: ReadonlyArray<DeclaredServicePort>,
  listening: ReadonlySet<string>,
  open: ReadonlySet<string>
): Array<DeclaredServicePort & { readonly listening: boolean; readonly public: boolean }> =>
  declared.map((entry) => {
    const key = portKey(entry.port, entry.service)
    return { ...entry, listening: listening.has(key), public: open.has(key) }
  })
