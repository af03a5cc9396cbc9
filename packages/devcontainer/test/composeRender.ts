import { parse } from "yaml"
import { interpolate } from "../src/index.ts"

// What `docker compose config` does to a project's Compose files, as far as
// the corpus needs it, so the pure tests run without Compose: each file
// parsed, `${…}` interpolated from an empty environment (prbox runs Compose
// with a scrubbed one; the package's own `interpolate`), the files merged in order, and relative paths made
// absolute against the first file's folder under `root` (the repository's
// copy). An env_file that is not in the repository fails the rendering, as
// it fails Compose's. The engine's tests run the real Compose.

export interface ComposeFileText {
  /** Repository-relative. */
  readonly path: string
  readonly text: string
}

export type Rendered = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly why: string }

class RenderError extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const OVERRIDDEN = new Set(["command", "entrypoint", "test"])

/** Compose's merge of a later file over an earlier one: mappings merged, lists joined (without repeats), the rest replaced. */
const merge = (earlier: unknown, later: unknown, key = ""): unknown => {
  if (isRecord(earlier) && isRecord(later)) {
    const out: Record<string, unknown> = { ...earlier }
    for (const [name, value] of Object.entries(later)) out[name] = name in out ? merge(out[name], value, name) : value
    return out
  }
  if (Array.isArray(earlier) && Array.isArray(later) && !OVERRIDDEN.has(key)) {
    const seen = new Set(earlier.map((one) => JSON.stringify(one)))
    return [...earlier, ...later.filter((one) => !seen.has(JSON.stringify(one)))]
  }
  return later
}

/** An absolute path normalised ("." and ".." resolved; it may climb above the repository). */
const normalise = (path: string): string => {
  const parts: Array<string> = []
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") parts.pop()
    else parts.push(part)
  }
  return `/${parts.join("/")}`
}

const HOME = "/home/reviewer"

export const renderCompose = (
  files: ReadonlyArray<ComposeFileText>,
  root: string,
  exists: (repositoryPath: string) => boolean
): Rendered => {
  try {
    const first = files[0]
    if (first === undefined) return { ok: false, why: "no Compose file" }
    const projectDir = normalise(`${root}/${first.path.split("/").slice(0, -1).join("/")}`)
    const absolute = (path: string) =>
      path.startsWith("/")
        ? normalise(path)
        : path.startsWith("~")
          ? normalise(`${HOME}/${path.slice(1)}`)
          : normalise(`${projectDir}/${path}`)
    let project: unknown = {}
    for (const file of files) {
      let parsed: unknown
      try {
        parsed = parse(file.text, { maxAliasCount: 100 })
      } catch {
        return { ok: false, why: `${file.path} is not valid YAML` }
      }
      const filled = interpolate(parsed ?? {})
      if (!filled.ok) return { ok: false, why: filled.why }
      project = merge(project, filled.value)
    }
    if (!isRecord(project) || !isRecord(project.services)) return { ok: false, why: "no services" }
    const services: Record<string, unknown> = {}
    for (const [name, raw] of Object.entries(project.services)) {
      const service: Record<string, unknown> = isRecord(raw) ? { ...raw } : {}
      const build = service.build
      if (typeof build === "string") service.build = { context: absolute(build) }
      else if (isRecord(build))
        service.build = { ...build, context: absolute(typeof build.context === "string" ? build.context : ".") }
      if (Array.isArray(service.volumes)) {
        service.volumes = service.volumes.map((entry) => {
          if (typeof entry === "string") {
            const [source = "", ...rest] = entry.split(":")
            return rest.length > 0 && /^[.~/]/.test(source) ? [absolute(source), ...rest].join(":") : entry
          }
          return isRecord(entry) && entry.type === "bind" && typeof entry.source === "string"
            ? { ...entry, source: absolute(entry.source) }
            : entry
        })
      }
      if (service.env_file !== undefined) {
        service.env_file = [service.env_file].flat().map((entry) => {
          const path = absolute(String(entry))
          const inRepo = path.startsWith(`${root}/`) ? path.slice(root.length + 1) : undefined
          if (inRepo === undefined || !exists(inRepo)) {
            throw new RenderError(`env_file ${inRepo ?? "outside the repository"} is not in the repository`)
          }
          return path
        })
      }
      services[name] = service
    }
    return { ok: true, value: { ...project, services } }
  } catch (error) {
    if (error instanceof RenderError) return { ok: false, why: error.message }
    throw error
  }
}
