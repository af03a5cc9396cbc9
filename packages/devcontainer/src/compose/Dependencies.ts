import { volumesFromService } from "./ComposeMounts.ts"
import { isRecord, sharedWith } from "./ComposeValues.ts"

// What a service needs started with it, as Compose starts it: `depends_on`
// (a list or a mapping), `links`, and the services whose namespaces or
// volumes it shares.

/** The services a rendered service definition needs (names as written; unknown ones are the caller's to drop). */
export const dependenciesOf = (definition: unknown): ReadonlyArray<string> => {
  if (!isRecord(definition)) return []
  const found: Array<string> = []
  const dependsOn = definition.depends_on
  if (Array.isArray(dependsOn)) found.push(...dependsOn.map(String))
  else if (isRecord(dependsOn)) found.push(...Object.keys(dependsOn))
  if (Array.isArray(definition.links)) found.push(...definition.links.map((link) => String(link).split(":")[0] ?? ""))
  for (const key of ["network_mode", "pid", "ipc"]) {
    const value = definition[key]
    const shared = typeof value === "string" ? sharedWith(value) : undefined
    if (shared?.kind === "service") found.push(shared.name)
  }
  if (Array.isArray(definition.volumes_from)) {
    for (const entry of definition.volumes_from) {
      const service = typeof entry === "string" ? volumesFromService(entry) : undefined
      if (service !== undefined) found.push(service)
    }
  }
  return found
}
