export type FileType = "file" | "directory" | "symlink" | "other"

export interface FileEntry {
  readonly path: string
  readonly type: FileType
  /** Bytes, for files; null otherwise. */
  readonly size: number | null
}

/** A folder's entries to `depth` (`.git`'s insides left out), cut at the entry bound. */
export interface FileListing {
  readonly path: string
  readonly entries: ReadonlyArray<FileEntry>
  readonly truncated: boolean
}

const TYPES: Readonly<Record<string, FileType>> = { f: "file", d: "directory", l: "symlink", o: "other" }

/** One `<type> <size|-> <path>` record of FileScripts' LIST_SH, or undefined when it is not one. */
const parseEntry = (folder: string, record: string): FileEntry | undefined => {
  const match = /^([fdlo]) (\d+|-) ([\s\S]+)$/.exec(record)
  if (match === null) return undefined
  const [, type = "o", size = "-", name = ""] = match
  return {
    path: folder === "." ? name : `${folder}/${name}`,
    type: TYPES[type] ?? "other",
    size: type === "f" && size !== "-" ? Number(size) : null
  }
}

/**
 * LIST_SH's NUL-terminated records (shallow levels first) as a listing
 * sorted by path, cut at `maxEntries`. Output that reached `maxBytes` was
 * cut by the script: its last record is partial and the listing truncated.
 */
export const parseListing = (
  folder: string,
  stdout: string,
  bounds: { readonly maxEntries: number; readonly maxBytes: number }
): FileListing => {
  const records = stdout.split("\0")
  // What follows the last NUL is empty, or a record the byte bound cut.
  const partial = records.pop() ?? ""
  const cut = partial.length > 0 || new TextEncoder().encode(stdout).length >= bounds.maxBytes
  const entries = records.flatMap((record) => {
    const entry = parseEntry(folder, record)
    return entry === undefined ? [] : [entry]
  })
  const kept = entries.slice(0, bounds.maxEntries)
  return {
    path: folder,
    entries: kept.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    truncated: cut || entries.length > bounds.maxEntries
  }
}
