/**
 * Paths that agents and the CLI name inside a sandbox's workspace: always
 * relative to the workspace folder. This is the lexical half of confinement
 * (no absolute path, no `..` that climbs out, no NUL); the engine resolves
 * symbolic links inside the container and refuses what lands outside.
 */

export type WorkspacePathCheck =
  | { readonly _tag: "Inside"; readonly path: string }
  | { readonly _tag: "Refused"; readonly reason: string }

/** The largest answer of one read, listing or diff. */
export const MAX_READ_BYTES = 1024 * 1024
/** The largest file `write` and `edit` take (a write's JSON body stays under the daemon's body limit). */
export const MAX_WRITE_BYTES = 256 * 1024
export const MAX_LIST_DEPTH = 10
/** Entries of one listing. */
export const MAX_LIST_ENTRIES = 2000

/** Longest path accepted, in characters. */
export const MAX_WORKSPACE_PATH = 4096

/**
 * `input` normalized (`a/./b/../c` → `a/c`, the workspace itself → `.`), or
 * why it is refused. Never touches a file system.
 */
export const workspacePath = (input: string): WorkspacePathCheck => {
  if (input.length > MAX_WORKSPACE_PATH) {
    return { _tag: "Refused", reason: `a path is at most ${MAX_WORKSPACE_PATH} characters` }
  }
  if (input.includes("\0")) return { _tag: "Refused", reason: "a path cannot contain NUL" }
  if (input.startsWith("/") || input.startsWith("~")) {
    return { _tag: "Refused", reason: "paths are relative to the workspace; an absolute path is refused" }
  }
  const parts: Array<string> = []
  for (const segment of input.split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (parts.length === 0) return { _tag: "Refused", reason: "the path climbs out of the workspace" }
      parts.pop()
    } else {
      parts.push(segment)
    }
  }
  return { _tag: "Inside", path: parts.length === 0 ? "." : parts.join("/") }
}

/** `relative` (normalized) under the container's workspace folder. */
export const inWorkspace = (workspaceFolder: string, relative: string): string =>
  relative === "." ? workspaceFolder : `${workspaceFolder.replace(/\/+$/, "")}/${relative}`
