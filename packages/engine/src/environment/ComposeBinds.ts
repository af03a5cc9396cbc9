/**
 * What a Compose project binds from prbox's copy of the repository. Docker
 * resolves a bind's source on the host each time a container starts, links
 * included: a service that can write a folder holding another bind's source
 * could put a link there (`data/conf -> /etc/shadow`) and have the host's
 * file mounted into a container at the next start. So a bind whose source
 * holds another bind's source is made read-only wherever it is mounted. Pure.
 */
/** A Compose project as parsed JSON: the engine's Compose steps read it as plain objects. */
export type Json = Record<string, unknown>

export const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const servicesOf = (project: Json): ReadonlyArray<[string, Json]> =>
  isObject(project.services)
    ? Object.entries(project.services).flatMap(
        ([name, service]): ReadonlyArray<[string, Json]> => (isObject(service) ? [[name, service]] : [])
      )
    : []

/** Where a service's volume entry mounts, in either syntax. */
export const volumeTarget = (entry: unknown): string | undefined => {
  if (isObject(entry)) return typeof entry.target === "string" ? entry.target : undefined
  if (typeof entry !== "string") return undefined
  const parts = entry.split(":")
  return parts.length === 1 ? parts[0] : parts[1]
}

/** A volume entry's host source when it is a bind (Compose renders them absolute), else undefined. */
export const bindSource = (entry: unknown): string | undefined => {
  if (isObject(entry)) return entry.type === "bind" && typeof entry.source === "string" ? entry.source : undefined
  if (typeof entry !== "string" || !entry.startsWith("/")) return undefined
  return entry.split(":")[0]
}

/** The host paths the project's services bind, as Compose rendered them (absolute). */
export const bindSources = (project: Json): ReadonlyArray<string> =>
  servicesOf(project).flatMap(([, service]) =>
    (Array.isArray(service.volumes) ? service.volumes : []).flatMap((entry) => {
      const source = bindSource(entry)
      return source === undefined ? [] : [source]
    })
  )

const holds = (folder: string, path: string) => path !== folder && path.startsWith(`${folder.replace(/\/$/, "")}/`)

/** The entry mounted read-only, in its own syntax (`src:dst[:opts]`, or the long form). */
const readOnly = (entry: unknown): unknown => {
  if (isObject(entry)) return { ...entry, read_only: true }
  const [source, target, options] = String(entry).split(":")
  const kept = (options ?? "").split(",").filter((option) => option !== "" && option !== "rw" && option !== "ro")
  return `${source}:${target}:${["ro", ...kept].join(",")}`
}

/**
 * The project with every bind that holds another bind's source made
 * read-only, and each change named (`services.<name>.volumes[<i>]`).
 */
export const sealNestedBinds = (project: Json): { readonly project: Json; readonly sealed: ReadonlyArray<string> } => {
  const sources = bindSources(project)
  const sealed: Array<string> = []
  const services = servicesOf(project).map(([name, service]): [string, Json] => {
    if (!Array.isArray(service.volumes)) return [name, service]
    const volumes = service.volumes.map((entry, index) => {
      const source = bindSource(entry)
      if (source === undefined || !sources.some((other) => holds(source, other))) return entry
      sealed.push(`services.${name}.volumes[${index}]`)
      return readOnly(entry)
    })
    return [name, { ...service, volumes }]
  })
  return sealed.length === 0
    ? { project, sealed }
    : { project: { ...project, services: Object.fromEntries(services) }, sealed }
}
