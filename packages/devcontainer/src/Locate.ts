import { Effect } from "effect"
import { DevcontainerError } from "./Errors.ts"

/** The caller's access to the repository's files: repo-relative, "/"-separated paths; undefined = absent. */
export interface RepoFiles {
  readonly read: (path: string) => Effect.Effect<string | undefined, DevcontainerError>
  readonly list: (
    dir: string
  ) => Effect.Effect<
    ReadonlyArray<{ readonly name: string; readonly type: "file" | "dir" }> | undefined,
    DevcontainerError
  >
}

/** The devcontainer.json a sandbox uses: its repo-relative path and its text. */
export interface Located {
  readonly path: string
  readonly text: string
}

const folder = ".devcontainer"
const primary = [`${folder}/devcontainer.json`, ".devcontainer.json"] as const
const named = (name: string) => `${folder}/${name}/devcontainer.json`

// The names of `.devcontainer/<name>/devcontainer.json` that exist, sorted.
const namedConfigs = (tree: RepoFiles) =>
  Effect.gen(function* () {
    const entries = (yield* tree.list(folder)) ?? []
    const found: Array<Located & { readonly name: string }> = []
    for (const entry of entries.filter((entry) => entry.type === "dir")) {
      const text = yield* tree.read(named(entry.name))
      if (text !== undefined) found.push({ name: entry.name, path: named(entry.name), text })
    }
    return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  })

const nameList = (names: ReadonlyArray<{ readonly name: string }>) => names.map((entry) => entry.name).join(", ")

/**
 * Finds the devcontainer.json where the spec looks: `.devcontainer/devcontainer.json`,
 * then `.devcontainer.json`, then `.devcontainer/<name>/devcontainer.json`.
 * `wanted` (`--devcontainer <name>`) picks a named one and nothing else.
 * Without it the first two win, else a single named one; several named ones
 * are an error naming them. undefined: the repository has none.
 */
export const locateDevcontainer = Effect.fn("Devcontainer.locate")(function* (tree: RepoFiles, wanted?: string) {
  if (wanted !== undefined) {
    const all = yield* namedConfigs(tree)
    const hit = all.find((entry) => entry.name === wanted)
    if (hit !== undefined) return { path: hit.path, text: hit.text } satisfies Located
    return yield* new DevcontainerError({
      file: named(wanted),
      detail:
        all.length === 0
          ? "not found: the repository has no .devcontainer/<name>/devcontainer.json"
          : `not found; the repository has: ${nameList(all)}`
    })
  }
  for (const path of primary) {
    const text = yield* tree.read(path)
    if (text !== undefined) return { path, text } satisfies Located
  }
  const all = yield* namedConfigs(tree)
  const [only, ...others] = all
  if (only === undefined) return undefined
  if (others.length === 0) return { path: only.path, text: only.text } satisfies Located
  return yield* new DevcontainerError({
    file: `${folder}/<name>/devcontainer.json`,
    detail: `the repository has several (${nameList(all)}): pass --devcontainer <name> to choose one`
  })
})
