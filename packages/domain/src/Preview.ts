import { Schema } from "effect"
import { HostPort, SandboxId } from "./Ids.ts"
import { servicePathSegment } from "./PortKey.ts"
import { isPreviewServiceName, serviceHostLabels } from "./ServicePreview.ts"

/** Where a port of a sandbox's preview list comes from. */
export const PortSource = Schema.Literals(["devcontainer", "config", "discovered", "compose"])
export type PortSource = typeof PortSource.Type

/**
 * One port of a sandbox, as `prbox ports` and the extension show it: declared
 * (devcontainer.json `forwardPorts`, config.json `ports`) or discovered
 * listening inside the container, and whether it is open without auth.
 */
export const PreviewPort = Schema.Struct({
  port: HostPort,
  /** Another Compose service's port (the app reaches it by this name); absent: the sandbox's own container. */
  service: Schema.optionalKey(Schema.String),
  label: Schema.NullOr(Schema.String),
  source: PortSource,
  /** devcontainer.json's `portsAttributes[port].onAutoForward` (`openBrowser`, `notify`, ...), or config.json's. */
  onAutoForward: Schema.NullOr(Schema.String),
  /** Something listens on it inside the container now. */
  listening: Schema.Boolean,
  /** Opened without auth (`prbox ports --public`) until the sandbox stops. */
  public: Schema.Boolean
})
export type PreviewPort = typeof PreviewPort.Type

/** The cookie a browser keeps a sandbox's preview token in (host form only, Domain=<id>.localhost). */
export const PREVIEW_COOKIE = "prbox-preview"

/** Where a request to the preview server is going, read from its Host header. */
export type PreviewTarget =
  /**
   * `<port>.<sandboxId>.localhost:<previewPort>`: one sandbox's port, the app at `/`;
   * `<port>.<service>.<sandboxId>.localhost:<previewPort>`: another Compose service's.
   */
  | {
      readonly _tag: "HostForm"
      readonly sandboxId: SandboxId
      readonly port: number
      readonly service?: string
    }
  /** `localhost:<previewPort>` or `127.0.0.1:<previewPort>`: `/s/<id>/<port>/...` paths, shared by all sandboxes. */
  | { readonly _tag: "PathForm" }
  /** Any other Host (another port, a rebound DNS name, none at all): refused. */
  | { readonly _tag: "Foreign" }

const FOREIGN: PreviewTarget = { _tag: "Foreign" }
const PATH_FORM: PreviewTarget = { _tag: "PathForm" }

const SANDBOX_ID = /^[a-z0-9]{12}$/

/** A TCP port written the one way we write it: decimal, no sign, no leading zero, 1..65535. */
const parsePort = (text: string): number | undefined => {
  if (!/^[1-9][0-9]{0,4}$/.test(text)) return undefined
  const port = Number(text)
  return port <= 65535 ? port : undefined
}

/**
 * The preview server's reading of a Host header (case-insensitive). The port
 * must be `previewPort` exactly: a Host without one, or with another, is not
 * ours. IPv6 literals are Foreign: the server listens on 127.0.0.1 only.
 */
export const previewTarget = (host: string | undefined, previewPort: number): PreviewTarget => {
  if (host === undefined) return FOREIGN
  const colon = host.lastIndexOf(":")
  if (colon < 0 || parsePort(host.slice(colon + 1)) !== previewPort) return FOREIGN
  const name = host.slice(0, colon).toLowerCase()
  if (name === "localhost" || name === "127.0.0.1") return PATH_FORM
  const labels = name.split(".")
  if ((labels.length !== 3 && labels.length !== 4) || labels.at(-1) !== "localhost") return FOREIGN
  const [portLabel = "", ...middle] = labels.slice(0, -1)
  const id = middle.pop() ?? ""
  const service = middle[0]
  const port = parsePort(portLabel)
  if (port === undefined || !SANDBOX_ID.test(id)) return FOREIGN
  if (service !== undefined && !isPreviewServiceName(service)) return FOREIGN
  return { _tag: "HostForm", sandboxId: SandboxId.make(id), port, ...(service === undefined ? {} : { service }) }
}

/** A path-form request: the sandbox, its port and what the app is asked for (always starting with `/`). */
export interface PreviewPath {
  readonly sandboxId: SandboxId
  readonly port: number
  /** Another Compose service's port: `/s/<id>/<service>:<port>/`. */
  readonly service?: string
  readonly rest: string
}

const PATH_FORM_TARGET = /^\/s\/([a-z0-9]{12})\/([^/?#]*)(.*)$/s

/**
 * Reads `/s/<id>/<port>[/<rest>][?query]` (the request target as sent). The
 * app gets `/<rest>` with the query as it came; what `<rest>` holds (`..`,
 * encoded slashes) is the app's business and never moves the id or the port.
 */
export const parsePreviewPath = (target: string): PreviewPath | undefined => {
  const match = PATH_FORM_TARGET.exec(target)
  if (match === null) return undefined
  const [, id = "", segment = "", tail = ""] = match
  const colon = segment.indexOf(":")
  const service = colon < 0 ? undefined : segment.slice(0, colon)
  const port = parsePort(segment.slice(colon + 1))
  if (port === undefined || (service !== undefined && !isPreviewServiceName(service))) return undefined
  const rest = tail.startsWith("/") ? tail : `/${tail}`
  return { sandboxId: SandboxId.make(id), port, ...(service === undefined ? {} : { service }), rest }
}

/**
 * Whether a request's Origin may reach `target`. No Origin (curl, a top-level
 * navigation) passes: the Host check has already run. A host-form preview
 * takes requests from any port of the same sandbox, the path form from its own
 * shared origin only; `null`, https (we serve plain http only, so an https
 * origin is never one of our pages) and anything else are refused.
 */
export const originAllowed = (origin: string | undefined, target: PreviewTarget, previewPort: number): boolean => {
  if (origin === undefined) return true
  const lower = origin.toLowerCase()
  if (!lower.startsWith("http://")) return false
  const from = previewTarget(lower.slice("http://".length), previewPort)
  switch (target._tag) {
    case "HostForm":
      return from._tag === "HostForm" && from.sandboxId === target.sandboxId
    case "PathForm":
      return from._tag === "PathForm"
    case "Foreign":
      return false
  }
}

/** The host-form URL of a sandbox's port (of its other Compose `service`'s, when given). */
export const previewUrl = (id: SandboxId, port: number, previewPort: number, service?: string): string =>
  `http://${serviceHostLabels(port, service)}.${id}.localhost:${previewPort}/`

/** The path-form URL of a sandbox's port, for clients where `*.localhost` does not resolve. */
export const previewPathUrl = (id: SandboxId, port: number, previewPort: number, service?: string): string =>
  `http://localhost:${previewPort}/s/${id}/${servicePathSegment(port, service)}/`

/** `PRBOX_PREVIEW_URL_TEMPLATE` / `VSCODE_PROXY_URI` inside the container: `{{port}}` is replaced by the port. */
export const previewUrlTemplate = (id: SandboxId, previewPort: number): string =>
  `http://{{port}}.${id}.localhost:${previewPort}/`

/** The first cookie called `name` in a Cookie header (surrounding double quotes removed), if any. */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const pair of header.split(";")) {
    const equals = pair.indexOf("=")
    if (equals < 0 || pair.slice(0, equals).trim() !== name) continue
    const value = pair.slice(equals + 1).trim()
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value
  }
  return undefined
}

/** The token of an `Authorization: Bearer <token>` header (the scheme in any case). */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  authorization === undefined ? undefined : /^bearer +(\S+) *$/i.exec(authorization)?.[1]

// `   0: 0100007F:0BB8 00000000:0000 0A ...`: slot, local address:port (hex), remote, state (hex).
const PROC_NET_ROW = /^\s*\d+:\s+[0-9A-Fa-f]+:([0-9A-Fa-f]{4})\s+[0-9A-Fa-f]+:[0-9A-Fa-f]{4}\s+([0-9A-Fa-f]{2})\s/
const TCP_LISTEN = "0A"

/**
 * The ports something listens on, from the text of /proc/net/tcp and
 * /proc/net/tcp6 (one after the other): state LISTEN only, each port once,
 * ascending. Undefined when the text is not that (no header line, or a line
 * that is neither a header nor a socket row): an answer that cannot be read
 * is never "nothing listens".
 */
export const listeningPorts = (procNetText: string): Array<number> | undefined => {
  const ports = new Set<number>()
  let headers = 0
  for (const line of procNetText.split("\n")) {
    if (line.trim() === "") continue
    if (/^\s*sl\s+local_address\s/.test(line)) {
      headers++
      continue
    }
    const match = PROC_NET_ROW.exec(line)
    if (match === null) return undefined
    if (match[2]?.toUpperCase() !== TCP_LISTEN) continue
    const port = Number.parseInt(match[1] ?? "", 16)
    if (port > 0) ports.add(port)
  }
  return headers === 0 ? undefined : [...ports].sort((a, b) => a - b)
}

/** A port config.json's `ports` names for every sandbox, listed whether it listens or not. */
export const ConfiguredPort = Schema.Struct({
  /** The port inside the container. */
  port: HostPort,
  /** Shown next to the port in `prbox ports` and the extension. */
  label: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  /** What the extension does when the port starts listening, as devcontainer.json's `portsAttributes` say it. */
  onAutoForward: Schema.optionalKey(Schema.Literals(["openBrowser", "notify", "silent", "ignore"]))
})
export type ConfiguredPort = typeof ConfiguredPort.Type

/** What devcontainer.json says about ports (as the environment plan keeps it). */
export interface DevcontainerPorts {
  readonly forwardPorts: ReadonlyArray<number | string>
  readonly portsAttributes: Readonly<Record<string, Readonly<Record<string, unknown>>>>
}

/** A port the configuration names, listening or not. */
export interface DeclaredPort {
  readonly port: number
  readonly label: string | null
  readonly source: "devcontainer" | "config"
  readonly onAutoForward: string | null
}

/** A `forwardPorts` entry's port in this sandbox: `3000`, `"3000"`, `"localhost:3000"`; another host's is not ours. */
const forwardedPort = (entry: number | string): number | undefined => {
  if (typeof entry === "number") return isPort(entry) ? entry : undefined
  const colon = entry.lastIndexOf(":")
  if (colon < 0) return parsePort(entry)
  return entry.slice(0, colon).toLowerCase() === "localhost" ? parsePort(entry.slice(colon + 1)) : undefined
}

const isPort = Schema.is(HostPort)

const stringOrNull = (value: unknown): string | null => (typeof value === "string" ? value : null)

/**
 * The ports a sandbox declares: devcontainer.json's `forwardPorts` (label and
 * onAutoForward from `portsAttributes`), then config.json's `ports`; a port
 * named twice keeps its first entry.
 */
export const declaredPorts = (
  devcontainer: DevcontainerPorts,
  configPorts: ReadonlyArray<ConfiguredPort>
): Array<DeclaredPort> => {
  const declared = new Map<number, DeclaredPort>()
  for (const entry of devcontainer.forwardPorts) {
    const port = forwardedPort(entry)
    if (port === undefined) continue
    // A port listed twice gets the same attributes and keeps its first place (a Map keeps insertion order).
    const attributes = devcontainer.portsAttributes[String(port)] ?? {}
    declared.set(port, {
      port,
      label: stringOrNull(attributes.label),
      source: "devcontainer",
      onAutoForward: stringOrNull(attributes.onAutoForward)
    })
  }
  for (const { port, label, onAutoForward } of configPorts) {
    if (declared.has(port)) continue
    declared.set(port, { port, label: label ?? null, source: "config", onAutoForward: onAutoForward ?? null })
  }
  return [...declared.values()]
}

/** What a sandbox's port list is made of. */
export interface PortListInput {
  readonly declared: ReadonlyArray<DeclaredPort>
  /** Ports listening inside the container now (`listeningPorts`). */
  readonly listening: Iterable<number>
  /** Ports opened without auth. */
  readonly public: Iterable<number>
  /** prbox's own ports inside the container (code-server, the relay): never listed as discovered. */
  readonly hidden: Iterable<number>
}

/** The port list: declared ones in their order, then the other listening ones ascending. */
export const previewPorts = (input: PortListInput): Array<PreviewPort> => {
  const listening = new Set(input.listening)
  const open = new Set(input.public)
  const hidden = new Set(input.hidden)
  const declared = new Set(input.declared.map((entry) => entry.port))
  const discovered = [...listening].filter((port) => !declared.has(port) && !hidden.has(port)).sort((a, b) => a - b)
  return [
    ...input.declared.map((entry) => ({
      ...entry,
      listening: listening.has(entry.port),
      public: open.has(entry.port)
    })),
    ...discovered.map((port) => ({
      port,
      label: null,
      source: "discovered" as const,
      onAutoForward: null,
      listening: true,
      public: open.has(port)
    }))
  ]
}
