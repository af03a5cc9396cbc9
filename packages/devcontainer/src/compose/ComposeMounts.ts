import {
  combineList,
  inRepository,
  isRecord,
  type KeyResult,
  keep,
  refused,
  sharedWith,
  widen
} from "./ComposeValues.ts"

// A service's `volumes` and `volumes_from`: named and anonymous volumes are
// the project's own, a bind mount inside the repository is the sandbox's own
// copy; a bind mount anywhere else (the Docker socket, the home folder, /)
// reaches the host. Mount propagation back to the host is widening too.

const SOCKET = /docker\.sock/
const SHARING = new Set(["shared", "rshared", "slave", "rslave"])

const bindDetail = (source: string) =>
  SOCKET.test(source) ? "mounts the Docker socket" : "mounts storage from the host (outside the repository)"
const propagationDetail = "propagates mounts between the container and the host"

/** `source:target[:mode]`, `target` alone for an anonymous volume. */
const shortEntry = (property: string, root: string, text: string): KeyResult => {
  const parts = text.split(":")
  if (parts.length === 1) return keep(text)
  const [source = "", target = "", mode, ...more] = parts
  if (more.length > 0 || source === "" || target === "") return refused(property, "is not a mount Compose renders")
  const isBind = /^[/.~]/.test(source)
  if (isBind && inRepository(root, source) === undefined) return widen(property, bindDetail(source), text)
  const modes = mode === undefined ? [] : mode.split(",")
  if (!isBind || !modes.some((one) => SHARING.has(one))) return keep(text)
  const kept = modes.filter((one) => !SHARING.has(one))
  return widen(
    property,
    propagationDetail,
    text,
    [source, target, ...(kept.length === 0 ? [] : [kept.join(",")])].join(":")
  )
}

const LONG_KEYS = new Set(["type", "source", "target", "read_only", "bind", "volume", "tmpfs", "consistency", "image"])

const longEntry = (property: string, root: string, entry: Readonly<Record<string, unknown>>): KeyResult => {
  const unknown = Object.keys(entry).find((key) => !LONG_KEYS.has(key))
  if (unknown !== undefined) return refused(`${property}.${unknown}`, "is not a mount option prbox knows")
  const source = typeof entry.source === "string" ? entry.source : undefined
  switch (entry.type) {
    case "volume":
    case "tmpfs":
    case "image":
      return keep(entry)
    case "bind": {
      if (source === undefined) return refused(property, "a bind mount needs a source")
      if (inRepository(root, source) === undefined) return widen(property, bindDetail(source), entry)
      const bind = isRecord(entry.bind) ? entry.bind : undefined
      const propagation = bind?.propagation
      if (typeof propagation !== "string" || !SHARING.has(propagation)) return keep(entry)
      const { propagation: _left, ...rest } = bind ?? {}
      return widen(`${property}.bind.propagation`, propagationDetail, entry, { ...entry, bind: rest })
    }
    case "npipe":
      return widen(property, "mounts a named pipe of the host", entry)
    default:
      return refused(`${property}.type`, "is not a mount type prbox knows")
  }
}

/** A service's `volumes`. */
export const volumesRule = (property: string, root: string, value: unknown): KeyResult =>
  Array.isArray(value)
    ? combineList(
        value.map((entry, index) => {
          const at = `${property}[${index}]`
          if (typeof entry === "string") return shortEntry(at, root, entry)
          return isRecord(entry) ? longEntry(at, root, entry) : refused(at, "is not a mount Compose renders")
        })
      )
    : refused(property, "expected a list")

/** The service a `volumes_from` entry names (`name`, `name:ro`, `service:name[:mode]`), or undefined for a container. */
export const volumesFromService = (entry: string): string | undefined => {
  const shared = sharedWith(entry)
  if (shared === undefined) return entry.split(":")[0]
  return shared.kind === "service" ? shared.name.split(":")[0] : undefined
}

/** A service's `volumes_from`: another service of the project, never a container outside it. */
export const volumesFromRule = (property: string, services: ReadonlySet<string>, value: unknown): KeyResult =>
  Array.isArray(value)
    ? combineList(
        value.map((entry, index) => {
          const at = `${property}[${index}]`
          if (typeof entry !== "string") return refused(at, "expected a service name")
          const service = volumesFromService(entry)
          return service !== undefined && services.has(service)
            ? keep(entry)
            : widen(at, "mounts the volumes of a container outside the project", entry)
        })
      )
    : refused(property, "expected a list")
