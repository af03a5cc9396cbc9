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

const MAX_ALIASES = 100

const pathsOf = (value: unknown): ReadonlyArray<unknown> =>
  (value === undefined ? [] : [value].flat()).flatMap((entry) => (isRecord(entry) ? entry.path : entry))

/**
 * The Compose files (in devcontainer.json's order) checked before rendering:
 * every path Compose reads while rendering is relative and inside the
 * repository, resolved as Compose resolves it (against the first file's
 * folder, variables from an empty environment). `trusted`: not checked.
 */
export const checkComposeFiles = (
  files: ReadonlyArray<ComposeFileText>,
  trusted: boolean
): Effect.Effect<void, DevcontainerError> =>
  Effect.gen(function* () {
    if (trusted) return
    const projectDir = folderOf(files[0]?.path ?? "")
    for (const file of files) {
      const fail = (property: string, detail: string) =>
        Effect.fail(new DevcontainerError({ file: file.path, property, detail }))
      let value: unknown
      try {
        value = parse(file.text, { maxAliasCount: MAX_ALIASES, merge: true })
      } catch {
        return yield* Effect.fail(new DevcontainerError({ file: file.path, detail: "not valid YAML" }))
      }
      if (value === null || value === undefined) continue
      if (!isRecord(value))
        return yield* Effect.fail(new DevcontainerError({ file: file.path, detail: "expected a mapping" }))
      const read: Array<readonly [string, unknown]> = []
      pathsOf(value.include).forEach((path, index) => {
        read.push([`include[${index}]`, path])
      })
      for (const [name, service] of Object.entries(isRecord(value.services) ? value.services : {})) {
        if (!isRecord(service)) continue
        for (const key of ["env_file", "label_file"]) {
          if (service[key] === undefined) continue
          pathsOf(service[key]).forEach((path, index) => {
            read.push([`services.${name}.${key}[${index}]`, path])
          })
        }
        const extendsFile = isRecord(service.extends) ? service.extends.file : undefined
        if (extendsFile !== undefined) read.push([`services.${name}.extends.file`, extendsFile])
      }
      for (const [property, path] of read) {
        const filled = typeof path === "string" ? interpolate(path) : { ok: true as const, value: "" }
        if (!filled.ok) return yield* fail(property, "holds a variable Compose cannot fill from an empty environment")
        const text = String(filled.value)
        // Compose expands a leading ~ to the home folder.
        if (text === "" || text.startsWith("~") || resolveInRepository(projectDir, text) === undefined) {
          return yield* fail(
            property,
            "must be a relative path to a file inside the repository: Compose reads it on the host while rendering"
          )
        }
      }
    }
  })
