import { Effect } from "effect"
import { parse } from "yaml"
import { DevcontainerError } from "../Errors.ts"
import { folderOf, resolveInRepository } from "../Paths.ts"
import { isRecord } from "./ComposeValues.ts"
import { interpolate } from "./Interpolate.ts"

// What Compose reads on the host while it renders (`config`), before the
// rendered project can be checked: an `env_file` or `label_file` is read and
// inlined into the environment, `extends.file` and `include` bring in other
// files. The PR's Compose files are checked for these first: each must be a
// file of the repository, else the host's file (~/.ssh/…, /etc/…) would reach
// the container. A trusted repository's are not checked (its widening is
// honoured).

/** A Compose file as the engine read it from the PR's commit (repository-relative path). */
export interface ComposeFileText {
  readonly path: string
  readonly text: string
}

/**
 * A path Compose reads while rendering, inside the repository
 * (repository-relative): the engine copies it in before rendering. `compose`:
 * a Compose file of its own (`extends.file`, `include`), checked in turn
 * with its own folder; `folder`: a build context, which Compose requires to
 * exist (only the folder is made).
 */
export interface ComposeRead {
  readonly property: string
  readonly path: string
  readonly kind: "file" | "compose" | "folder"
}

const MAX_ALIASES = 100

const pathsOf = (value: unknown): ReadonlyArray<unknown> =>
  (value === undefined ? [] : [value].flat()).flatMap((entry) => (isRecord(entry) ? entry.path : entry))

/** A build's context, when it is a path (a URL's is not read). */
const contextOf = (build: unknown): unknown => {
  const context = isRecord(build) ? (build.context ?? ".") : build
  return typeof context === "string" && /^[a-z][a-z0-9+.-]*:\/\/|^git@/i.test(context) ? undefined : context
}

/**
 * The Compose files (in devcontainer.json's order) checked before rendering:
 * every path Compose reads while rendering is relative and inside the
 * repository, resolved as Compose resolves it (against `projectDir`, by
 * default the first file's folder; variables from an empty environment).
 * `trusted`: not refused. The paths inside the repository are returned.
 */
export const checkComposeFiles = (
  files: ReadonlyArray<ComposeFileText>,
  trusted: boolean,
  projectDir: string = folderOf(files[0]?.path ?? "")
): Effect.Effect<ReadonlyArray<ComposeRead>, DevcontainerError> =>
  Effect.gen(function* () {
    const found: Array<ComposeRead> = []
    for (const file of files) {
      const fail = (property: string, detail: string) =>
        Effect.fail(new DevcontainerError({ file: file.path, property, detail }))
      let value: unknown
      try {
        value = parse(file.text, { maxAliasCount: MAX_ALIASES, merge: true })
      } catch {
        if (trusted) continue
        return yield* Effect.fail(new DevcontainerError({ file: file.path, detail: "not valid YAML" }))
      }
      if (value === null || value === undefined) continue
      if (!isRecord(value)) {
        if (trusted) continue
        return yield* Effect.fail(new DevcontainerError({ file: file.path, detail: "expected a mapping" }))
      }
      const read: Array<readonly [string, unknown, ComposeRead["kind"]]> = []
      pathsOf(value.include).forEach((path, index) => {
        read.push([`include[${index}]`, path, "compose"])
      })
      for (const [name, service] of Object.entries(isRecord(value.services) ? value.services : {})) {
        if (!isRecord(service)) continue
        for (const key of ["env_file", "label_file"]) {
          if (service[key] === undefined) continue
          pathsOf(service[key]).forEach((path, index) => {
            read.push([`services.${name}.${key}[${index}]`, path, "file"])
          })
        }
        const extendsFile = isRecord(service.extends) ? service.extends.file : undefined
        if (extendsFile !== undefined) read.push([`services.${name}.extends.file`, extendsFile, "compose"])
        const context = contextOf(service.build)
        if (context !== undefined) read.push([`services.${name}.build.context`, context, "folder"])
      }
      for (const [property, path, kind] of read) {
        const filled = typeof path === "string" ? interpolate(path) : { ok: true as const, value: "" }
        const text = filled.ok ? String(filled.value) : ""
        // Compose expands a leading ~ to the home folder.
        const inside = text === "" || text.startsWith("~") ? undefined : resolveInRepository(projectDir, text)
        if (inside !== undefined) found.push({ property, path: inside, kind })
        // A build context outside is the rendered project's check's to refuse (it is not read while rendering).
        else if (trusted || kind === "folder") continue
        else if (!filled.ok) {
          return yield* fail(property, "holds a variable Compose cannot fill from an empty environment")
        } else {
          return yield* fail(
            property,
            "must be a relative path to a file inside the repository: Compose reads it on the host while rendering"
          )
        }
      }
    }
    return found
  })
