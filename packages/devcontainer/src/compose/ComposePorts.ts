import { combineList, type KeyResult, keep, refused, scalarText, widen } from "./ComposeValues.ts"

// `ports`: a published port reaches whoever reaches the host's addresses. An
// untrusted repository's are rebound to 127.0.0.1 (the sandbox's own port
// rule), written in the short form both Compose v1 and v2 read (v1 has no
// `host_ip` in the long form).

const LOOPBACK = "127.0.0.1"
const PORTS = /^\d+(-\d+)?$/

interface Port {
  readonly hostIp: string | undefined
  readonly published: string | undefined
  readonly target: string
  readonly protocol: string | undefined
}

/** `[[ip:]published:]target[/protocol]`, IPv6 addresses in brackets. */
const parseShort = (text: string): Port | undefined => {
  const [spec = "", protocol, ...more] = text.split("/")
  if (more.length > 0) return undefined
  const bracket = /^\[([^\]]+)\]:(.*)$/.exec(spec)
  const hostIp = bracket === null ? undefined : bracket[1]
  const parts = (bracket === null ? spec : (bracket[2] ?? "")).split(":")
  if (bracket !== null && parts.length !== 2) return undefined
  const [a, b, c] = parts
  if (parts.length === 1 && a !== undefined) return { hostIp, published: undefined, target: a, protocol }
  if (parts.length === 2 && a !== undefined && b !== undefined)
    return { hostIp, published: a === "" ? undefined : a, target: b, protocol }
  if (parts.length === 3 && a !== undefined && b !== undefined && c !== undefined)
    return { hostIp: a === "" ? undefined : a, published: b === "" ? undefined : b, target: c, protocol }
  return undefined
}

const parseLong = (value: Readonly<Record<string, unknown>>): Port | undefined => {
  const target = scalarText(value.target)
  if (target === undefined) return undefined
  const published = scalarText(value.published)
  const hostIp = scalarText(value.host_ip)
  const protocol = scalarText(value.protocol)
  return { hostIp, published: published === "" ? undefined : published, target, protocol }
}

const written = (port: Port): string =>
  `${LOOPBACK}:${port.published ?? ""}:${port.target}${port.protocol === undefined ? "" : `/${port.protocol}`}`

/** One `ports` entry. */
const portEntry = (property: string, value: unknown): KeyResult => {
  const port =
    typeof value === "string" || typeof value === "number"
      ? parseShort(String(value))
      : typeof value === "object" && value !== null && !Array.isArray(value)
        ? parseLong(value as Record<string, unknown>)
        : undefined
  if (
    port === undefined ||
    !PORTS.test(port.target) ||
    (port.published !== undefined && !PORTS.test(port.published)) ||
    (port.protocol !== undefined && !/^(tcp|udp|sctp)$/.test(port.protocol))
  ) {
    return refused(property, "is not a port Compose renders")
  }
  if (port.hostIp === LOOPBACK) return keep(written(port))
  return widen(property, "publishes a port on the host's addresses (rebound to 127.0.0.1)", value, written(port))
}

/** A service's `ports`. */
export const portsRule = (property: string, value: unknown): KeyResult =>
  Array.isArray(value)
    ? combineList(value.map((entry, index) => portEntry(`${property}[${index}]`, entry)))
    : refused(property, "expected a list")
