import { Effect } from "effect"
import type { RepoFiles } from "../src/index.ts"

/** A repository as a map of repo-relative paths to contents: the pure tests' stand-in for a checkout. */
export const repoFiles = (files: Readonly<Record<string, string>>): RepoFiles => ({
  read: (path) => Effect.succeed(files[path]),
  list: (dir) => {
    const prefix = `${dir}/`
    const children = new Map<string, "file" | "dir">()
    for (const path of Object.keys(files)) {
      if (!path.startsWith(prefix)) continue
      const [name = "", ...rest] = path.slice(prefix.length).split("/")
      children.set(name, rest.length === 0 ? "file" : "dir")
    }
    return Effect.succeed(children.size === 0 ? undefined : [...children].map(([name, type]) => ({ name, type })))
  }
})
