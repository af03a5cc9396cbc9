// Repository paths from devcontainer.json: relative to the file's folder,
// normalised, and never outside the repository (PR content may try).

/** The folder of a repo-relative file ("" for the root). */
export const folderOf = (file: string): string => file.split("/").slice(0, -1).join("/")

/**
 * `relative` resolved against the repo-relative `folder`: "/"-separated, no
 * "." or ".." left, "." for the root. undefined when it is absolute or climbs
 * out of the repository.
 */
export const resolveInRepository = (folder: string, relative: string): string | undefined => {
  if (relative.startsWith("/") || relative.includes("\\") || /^[a-z]:/i.test(relative)) return undefined
  const parts: Array<string> = []
  for (const part of [...folder.split("/"), ...relative.split("/")]) {
    if (part === "" || part === ".") continue
    if (part !== "..") parts.push(part)
    else if (parts.pop() === undefined) return undefined
  }
  return parts.length === 0 ? "." : parts.join("/")
}

/** An absolute container path, normalised; undefined when relative, "/" itself, or holding "..". */
export const containerFolder = (path: string): string | undefined => {
  if (!path.startsWith("/")) return undefined
  const parts = path.split("/").filter((part) => part !== "" && part !== ".")
  if (parts.length === 0 || parts.includes("..")) return undefined
  return `/${parts.join("/")}`
}
