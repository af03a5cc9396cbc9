import { volumesFromRule, volumesRule } from "./ComposeMounts.ts"
import { portsRule } from "./ComposePorts.ts"
import {
  combineList,
  DROP,
  dropped,
  inRepository,
  isRecord,
  type KeyResult,
  keep,
  refused,
  sharedWith,
  widen
} from "./ComposeValues.ts"

// One service key of the rendered project under prbox's policy (issue 29,
// item 3; the Compose specification's service keys). A key that reaches the
// host or widens the container is left out for an untrusted repository and
// kept for a trusted one; a key prbox does not know is refused (fail closed).
// `build` is the build rule's (ComposeBuild.ts).

export interface ServiceContext {
  /** `services.<name>` */
  readonly at: string
  readonly root: string
  /** Every service of the rendered project. */
  readonly services: ReadonlySet<string>
}

/** Keys that widen nothing: kept as rendered. */
const HARMLESS = new Set([
  "annotations",
  "attach",
  "cap_drop",
  "command",
  "cpu_count",
  "cpu_percent",
  "cpu_period",
  "cpu_quota",
  "cpu_shares",
  "cpus",
  "cpuset",
  "depends_on",
  "develop",
  "dns",
  "dns_opt",
  "dns_search",
  "domainname",
  "entrypoint",
  "environment",
  "expose",
  "group_add",
  "healthcheck",
  "hostname",
  "image",
  "init",
  "mac_address",
  "mem_limit",
  "mem_reservation",
  "mem_swappiness",
  "memswap_limit",
  "networks",
  "pids_limit",
  "platform",
  "post_start",
  "pre_stop",
  "profiles",
  "read_only",
  "restart",
  "scale",
  "shm_size",
  "stdin_open",
  "stop_grace_period",
  "stop_signal",
  "tmpfs",
  "tty",
  "ulimits",
  "user",
  "working_dir",
  "configs",
  "secrets"
])

const widens = "widens the container"
const hostNamespace = (what: string) => `shares the host's ${what} namespace`

/** Keys that widen whenever set (to anything but an empty or false value). */
const WIDENING: Readonly<Record<string, string>> = {
  privileged: widens,
  cap_add: widens,
  devices: "gives the container the host's devices",
  device_cgroup_rules: "gives the container the host's devices",
  gpus: "gives the container the host's GPUs",
  runtime: "runs the container under another runtime",
  cgroup_parent: "places the container in a cgroup of the host",
  sysctls: "sets kernel parameters",
  oom_kill_disable: "keeps the host's OOM killer from the container",
  blkio_config: "sets I/O limits on the host's devices",
  storage_opt: "sets the host's storage driver options",
  cpu_rt_runtime: "gives the container real-time CPU time",
  cpu_rt_period: "gives the container real-time CPU time",
  credential_spec: "reads a credential spec from the host",
  use_api_socket: "gives the container the Docker engine's API",
  external_links: "links to containers outside the project"
}

/** Said to every repository and not written: prbox owns these. */
const DROPPED: Readonly<Record<string, string>> = {
  container_name:
    "container_name is not used: prbox names the project's containers (two sandboxes of one repository would collide)",
  pull_policy: "pull_policy is not used: prbox pulls and builds the images itself",
  isolation: "isolation is not used (Windows containers only)"
}

const isEmpty = (value: unknown) =>
  value === false ||
  value === null ||
  (Array.isArray(value) && value.length === 0) ||
  (isRecord(value) && Object.keys(value).length === 0)

const isNarrowing = (option: unknown) => typeof option === "string" && /^no-new-privileges([:=]true)?$/.test(option)

const securityOptRule = (property: string, value: unknown): KeyResult => {
  if (!Array.isArray(value)) return refused(property, "expected a list")
  const narrowing = value.filter(isNarrowing)
  return narrowing.length === value.length ? keep(value) : widen(property, widens, value, narrowing)
}

const HOST_GATEWAY = /^host-gateway$/

const extraHostsRule = (property: string, value: unknown): KeyResult => {
  const entries: ReadonlyArray<readonly [string, unknown]> = Array.isArray(value)
    ? value.map((entry) => {
        const text = String(entry)
        const split = text.includes("=") ? text.indexOf("=") : text.indexOf(":")
        return [text, split < 0 ? "" : text.slice(split + 1)] as const
      })
    : isRecord(value)
      ? Object.entries(value).map(([name, address]) => [`${name}:${String(address)}`, address] as const)
      : []
  if (!Array.isArray(value) && !isRecord(value)) return refused(property, "expected a list or a mapping")
  return combineList(
    entries.map(([entry, address], index) =>
      [address].flat().some((one) => HOST_GATEWAY.test(String(one)))
        ? widen(`${property}[${index}]`, "names the host's gateway (reaches the host)", entry)
        : keep(entry)
    )
  )
}

/** network_mode, pid, ipc, uts, userns_mode, cgroup: the host's namespace widens, another service's is the project's. */
const namespaceRule = (key: string, property: string, value: unknown, services: ReadonlySet<string>): KeyResult => {
  if (typeof value !== "string") return refused(property, "expected a string")
  if (value === "host") return widen(property, hostNamespace(key === "network_mode" ? "network" : key), value)
  const shared = sharedWith(value)
  if (shared !== undefined) {
    return shared.kind === "service" && services.has(shared.name)
      ? keep(value)
      : widen(property, "joins a container outside the project", value)
  }
  const own: Readonly<Record<string, ReadonlyArray<string>>> = {
    network_mode: ["bridge", "none", "default"],
    ipc: ["private", "shareable", "none"],
    cgroup: ["private"],
    pid: [],
    uts: [],
    userns_mode: []
  }
  return (own[key] ?? []).includes(value)
    ? keep(value)
    : widen(property, "joins a namespace outside the project", value)
}

// Labels prbox reads to know its own containers: a project never claims them.
const CLAIMED = /^(dev\.prbox\.|com\.docker\.compose\.)/

const labelsRule = (property: string, value: unknown): KeyResult => {
  const pairs: ReadonlyArray<readonly [string, unknown]> = Array.isArray(value)
    ? value.map((entry) => {
        const text = String(entry)
        const split = text.indexOf("=")
        return [split < 0 ? text : text.slice(0, split), split < 0 ? "" : text.slice(split + 1)] as const
      })
    : isRecord(value)
      ? Object.entries(value)
      : []
  if (!Array.isArray(value) && !isRecord(value)) return refused(property, "expected a list or a mapping")
  const claimed = pairs.filter(([key]) => CLAIMED.test(key))
  const kept = Object.fromEntries(pairs.filter(([key]) => !CLAIMED.test(key)).map(([key, v]) => [key, String(v)]))
  return claimed.length === 0
    ? keep(kept)
    : { ...keep(kept), notes: [`${property}: labels prbox and Compose set themselves are not used`] }
}

const logDrivers = new Set(["json-file", "local", "none"])

const loggingRule = (property: string, value: unknown): KeyResult => {
  if (!isRecord(value)) return refused(property, "expected a mapping")
  return value.driver === undefined || logDrivers.has(String(value.driver))
    ? keep(value)
    : widen(`${property}.driver`, "sends the container's log outside it", value, {
        ...value,
        driver: "json-file",
        options: {}
      })
}

const deployRule = (property: string, value: unknown): KeyResult => {
  if (!isRecord(value)) return refused(property, "expected a mapping")
  const resources = isRecord(value.resources) ? value.resources : undefined
  const reservations = isRecord(resources?.reservations) ? resources.reservations : undefined
  if (reservations?.devices === undefined) return keep(value)
  const { devices: _devices, ...rest } = reservations
  return widen(`${property}.resources.reservations.devices`, "gives the container the host's devices", value, {
    ...value,
    resources: { ...resources, reservations: rest }
  })
}

/** env_file / label_file left in the rendering: read from the repository only. */
const filesRule = (property: string, root: string, value: unknown): KeyResult => {
  const list = [value].flat()
  return combineList(
    list.map((entry, index) => {
      const path = typeof entry === "string" ? entry : isRecord(entry) ? entry.path : undefined
      const at = Array.isArray(value) ? `${property}[${index}]` : property
      return typeof path === "string" && inRepository(root, path) !== undefined
        ? keep(entry)
        : widen(at, "reads a file outside the repository", entry)
    })
  )
}

const oomScoreRule = (property: string, value: unknown): KeyResult =>
  typeof value === "number" && value < 0
    ? widen(property, "shields the container from the host's OOM killer", value)
    : keep(value)

/** One key of a service (not `build`). */
export const serviceKeyRule = (key: string, value: unknown, context: ServiceContext): KeyResult => {
  const property = `${context.at}.${key}`
  if (key.startsWith("x-")) return { ...keep(value), untrusted: DROP, trusted: DROP }
  if (HARMLESS.has(key)) return keep(value)
  const dropNote = DROPPED[key]
  if (dropNote !== undefined) return dropped(`${context.at}: ${dropNote}`)
  const wideningDetail = WIDENING[key]
  if (wideningDetail !== undefined) return isEmpty(value) ? keep(value) : widen(property, wideningDetail, value)
  switch (key) {
    case "ports":
      return portsRule(property, value)
    case "volumes":
      return volumesRule(property, context.root, value)
    case "volumes_from":
      return volumesFromRule(property, context.services, value)
    case "security_opt":
      return securityOptRule(property, value)
    case "extra_hosts":
      return extraHostsRule(property, value)
    case "network_mode":
    case "pid":
    case "ipc":
    case "uts":
    case "userns_mode":
    case "cgroup":
      return namespaceRule(key, property, value, context.services)
    case "links":
      return Array.isArray(value) &&
        value.every((link) => typeof link === "string" && context.services.has(link.split(":")[0] ?? ""))
        ? keep(value)
        : widen(property, "links to containers outside the project", value)
    case "labels":
      return labelsRule(property, value)
    case "logging":
      return loggingRule(property, value)
    case "deploy":
      return deployRule(property, value)
    case "env_file":
    case "label_file":
      return filesRule(property, context.root, value)
    case "oom_score_adj":
      return oomScoreRule(property, value)
    case "extends":
      return refused(property, "was not resolved by the rendering; prbox cannot check what it brings in")
    default:
      return refused(property, "is not a Compose service key prbox knows (refused rather than run unchecked)")
  }
}
