import { Effect } from "effect"
import { DevcontainerError } from "../Errors.ts"
import { type CheckedCompose, type ComposeCheckInput, IMAGE_TO_BE_FILLED } from "./ComposeTypes.ts"

// TEMPORARY (branch compose-engine): a minimal pass-through of the contract
// so the engine's Compose path runs end to end until compose-policy's check
// is merged; compose-policy's file replaces this one whole.

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const WIDENING = [
  "privileged",
  "cap_add",
  "devices",
  "pid",
  "ipc",
  "cgroup_parent",
  "userns_mode",
  "sysctls",
  "runtime"
]

const relative = (root: string, path: string): string | undefined =>
  path === root ? "." : path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined

/** The rendered project checked under prbox's policy, service by service, and cleaned. */
export const checkComposeProject = (
  rendered: unknown,
  input: ComposeCheckInput
): Effect.Effect<CheckedCompose, DevcontainerError> =>
  Effect.gen(function* () {
    const fail = (detail: string) => Effect.fail(new DevcontainerError({ file: input.file, detail }))
    const all = isObject(rendered) && isObject(rendered.services) ? rendered.services : {}
    if (!isObject(all[input.service])) return yield* fail(`service ${input.service} is not in the Compose project`)
    const wanted = [input.service, ...(input.runServices ?? Object.keys(all))]
    const services: Array<string> = []
    const visit = (name: string) => {
      if (services.includes(name) || !isObject(all[name])) return
      services.push(name)
      const depends = (all[name] as Json).depends_on
      for (const next of Array.isArray(depends) ? depends : isObject(depends) ? Object.keys(depends) : []) {
        if (typeof next === "string") visit(next)
      }
    }
    for (const name of wanted) visit(name)
    const ignored: Array<{ property: string; detail: string }> = []
    const builds: Array<CheckedCompose["builds"][number]> = []
    const cleaned: Record<string, Json> = {}
    for (const name of services) {
      const service = { ...(all[name] as Json) }
      delete service.container_name
      if (!input.trusted) {
        for (const key of WIDENING) {
          if (service[key] === undefined) continue
          if (input.untrustedWidening === "refuse") return yield* fail(`services.${name}.${key} widens the container`)
          delete service[key]
          ignored.push({ property: `services.${name}.${key}`, detail: `service ${name}: ${key} is left out` })
        }
      }
      if (isObject(service.build)) {
        const context = relative(input.repositoryRoot, String(service.build.context ?? ""))
        if (context === undefined) return yield* fail(`services.${name}.build.context is outside the repository`)
        const dockerfile = `${context === "." ? "" : `${context}/`}${String(service.build.dockerfile ?? "Dockerfile")}`
        const args = isObject(service.build.args) ? service.build.args : {}
        builds.push({
          service: name,
          context,
          dockerfile,
          args: Object.fromEntries(Object.entries(args).map(([key, value]) => [key, String(value)])),
          ...(typeof service.build.target === "string" ? { target: service.build.target } : {})
        })
        delete service.build
        service.image = IMAGE_TO_BE_FILLED
      }
      cleaned[name] = service
    }
    const { services: _services, ...rest } = isObject(rendered) ? rendered : {}
    return { project: { ...rest, services: cleaned }, services, builds, ignored, warnings: [] }
  })
