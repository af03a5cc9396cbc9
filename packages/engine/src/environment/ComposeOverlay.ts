/**
 * prbox's part of a Compose sandbox, added to the checked project: the app
 * service becomes the sandbox's container (the ContainerSpec the
 * single-container path makes, as Compose properties), and every service,
 * network and volume carries the sandbox's labels. Pure: objects in, the
 * project Compose runs out.
 */
import { type ContainerSpec, hostMounts, LABELS } from "../ContainerSpec.ts"
import { isObject, type Json, volumeTarget } from "./ComposeBinds.ts"

/** Docker's own label for which published port is code-server's (packages/docker EngineAnswers.ts). */
export const EXPOSED_PORT_LABEL = "dev.prbox.docker.exposed-port"

/** Compose's label naming a container's service. */
export const COMPOSE_SERVICE_LABEL = "com.docker.compose.service"

/** Compose's project name for a sandbox: Compose's charset (lowercase letters, digits, `-`, `_`). */
export const composeProjectName = (sandboxId: string): string =>
  `prbox-${sandboxId.toLowerCase().replace(/[^a-z0-9_-]/g, "-")}`

/**
 * prbox's own values as Compose reads them: `$` is Compose's interpolation,
 * so it is written `$$` (the rendered project already is, as `config` prints it).
 */
export const literal = (value: string): string => value.replaceAll("$", () => "$$")

const literals = (values: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key, literal(value)]))

/** `KEY=value` list or mapping, as Compose writes either, to a mapping. */
const asMapping = (value: unknown): Record<string, unknown> => {
  if (isObject(value)) return { ...value }
  if (!Array.isArray(value)) return {}
  const entries = value.flatMap((item): ReadonlyArray<[string, unknown]> => {
    if (typeof item !== "string") return []
    const at = item.indexOf("=")
    return at < 0 ? [[item, null]] : [[item.slice(0, at), item.slice(at + 1)]]
  })
  return Object.fromEntries(entries)
}

/** A bind mount (a path of this machine) rather than a named volume, in either syntax. */
const isBind = (entry: unknown): boolean => {
  if (isObject(entry)) return entry.type === "bind"
  if (typeof entry !== "string") return true
  return entry.includes(":") && /^[./~]/.test(entry)
}

const under = (path: string, folder: string) => path === folder || path.startsWith(`${folder.replace(/\/$/, "")}/`)

/** The sandbox's labels over an entry's own (which may not claim prbox's). */
const labelled = (entry: unknown, labels: Readonly<Record<string, string>>): Json => {
  const own = isObject(entry) ? entry : {}
  return { ...own, labels: { ...asMapping(own.labels), ...labels } }
}

const mountsOf = (spec: ContainerSpec) =>
  hostMounts(spec).map((mount) => ({ source: mount.hostPath, target: mount.containerPath, readOnly: mount.readOnly }))

/** The ContainerSpec as the app service's properties (over what the service had). */
const appService = (own: Json, spec: ContainerSpec, volumeKeys: ReadonlyMap<string, string>): Json => {
  const mounts = mountsOf(spec)
  const targets = [
    ...mounts.map((mount) => mount.target),
    ...(spec.volumes ?? []).map((volume) => volume.containerPath)
  ]
  // Nothing of the PR's goes over prbox's folders (the workspace is prbox's checkout) or into them, but for
  // a named volume inside the workspace folder (`node_modules`), as the single-container path allows.
  const kept = (Array.isArray(own.volumes) ? own.volumes : []).filter((entry) => {
    const target = volumeTarget(entry)
    if (target === undefined) return false
    return !targets.some(
      (folder) => under(folder, target) || (under(target, folder) && (folder !== spec.workingDir || isBind(entry)))
    )
  })
  const {
    entrypoint: _entrypoint,
    command: _command,
    container_name: _name,
    build: _build,
    user: _user,
    working_dir: _workdir,
    ...rest
  } = own
  const service: Json = {
    ...rest,
    image: literal(spec.image),
    ...(spec.entrypoint === undefined ? {} : { entrypoint: spec.entrypoint.map(literal) }),
    command: spec.args.map(literal),
    environment: { ...asMapping(own.environment), ...literals(spec.env) },
    labels: { ...asMapping(own.labels), ...literals(spec.labels), [EXPOSED_PORT_LABEL]: String(spec.port) },
    volumes: [
      ...kept,
      ...mounts.map((mount) => ({
        type: "bind",
        source: mount.source,
        target: mount.target,
        read_only: mount.readOnly
      })),
      ...(spec.volumes ?? []).map((volume) => ({
        type: "volume",
        source: volumeKeys.get(volume.name),
        target: literal(volume.containerPath),
        read_only: volume.readOnly
      }))
    ],
    user: literal(spec.user),
    working_dir: literal(spec.workingDir),
    ports: [
      ...(Array.isArray(own.ports) ? own.ports : []),
      `127.0.0.1:${spec.hostPort === undefined ? "" : spec.hostPort}:${spec.port}`,
      ...(spec.relayPort === undefined ? [] : [`127.0.0.1::${spec.relayPort}`])
    ],
    init: spec.init ?? true,
    cap_drop: [...new Set([...(Array.isArray(own.cap_drop) ? own.cap_drop : []), ...spec.capDrop])]
  }
  if (spec.cpus !== undefined) service.cpus = spec.cpus
  if (spec.memoryBytes !== undefined) service.mem_limit = spec.memoryBytes
  if (spec.pidsLimit !== undefined) service.pids_limit = spec.pidsLimit
  if (spec.privileged !== undefined) service.privileged = spec.privileged
  if (spec.capAdd !== undefined && spec.capAdd.length > 0) service.cap_add = [...spec.capAdd]
  if (spec.securityOpt !== undefined) service.security_opt = [...spec.securityOpt]
  if (spec.hostname !== undefined) service.hostname = spec.hostname
  if (spec.extraHosts !== undefined) service.extra_hosts = [...spec.extraHosts]
  if (spec.shmSizeBytes !== undefined) service.shm_size = spec.shmSizeBytes
  return service
}

export interface OverlayInput {
  /** The checked project (compose-policy's cleaned copy, built images' tags written in). */
  readonly project: Json
  /** The devcontainer's `service`: the sandbox's container. */
  readonly service: string
  /** What the single-container path would make for this sandbox. */
  readonly spec: ContainerSpec
}

/**
 * The project Compose runs: the app service is the sandbox's, every
 * service, network and volume labelled as the sandbox's (how every
 * lifecycle operation finds them, Compose or not), no fixed names (one
 * project per sandbox), the Compose file version left to Compose.
 */
export const overlayCompose = ({ project, service, spec }: OverlayInput): Json | undefined => {
  const labels = literals(spec.labels)
  const services = isObject(project.services) ? project.services : {}
  // The check names the service it kept: one missing here is the caller's to report.
  if (!isObject(services[service])) return undefined
  // The sandbox's own volumes (spec.volumes) are declared by their exact names, labelled like the rest.
  const volumeKeys = new Map((spec.volumes ?? []).map((volume, index) => [volume.name, `prbox-sandbox-${index}`]))
  const declaredVolumes = isObject(project.volumes) ? project.volumes : {}
  const volumes: Json = Object.fromEntries([
    ...Object.entries(declaredVolumes).map(([key, entry]) => [key, labelled(entry, labels)]),
    ...[...volumeKeys].map(([name, key]) => [key, { name: literal(name), labels: { ...labels } }])
  ])
  const declaredNetworks = isObject(project.networks) ? project.networks : {}
  // Compose's `default` network is made for services without networks of their own: declared, it is labelled too.
  const networks: Json = Object.fromEntries(
    Object.entries({ default: {}, ...declaredNetworks }).map(([key, entry]) => [key, labelled(entry, labels)])
  )
  const cleaned = Object.fromEntries(
    Object.entries(services).map(([name, entry]) => {
      const own = isObject(entry) ? entry : {}
      if (name === service) return [name, appService(own, spec, volumeKeys)]
      const { container_name: _name, ...rest } = own
      return [name, labelled(rest, { ...labels, [LABELS.service]: name })]
    })
  )
  const { version: _version, name: _project, ...top } = project
  return {
    ...top,
    services: cleaned,
    networks,
    ...(Object.keys(volumes).length === 0 ? {} : { volumes })
  }
}
