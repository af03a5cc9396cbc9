import { constants, type ReadStream } from "node:fs"
import { lstat, open, readdir, readlink } from "node:fs/promises"
import { join } from "node:path"
import type { Readable } from "node:stream"
import { Effect } from "effect"
import * as tar from "tar-stream"
import { FolderUnreadable } from "../DockerError.ts"

/*
 * Folders of this machine as tar streams, the engine's archive format.
 * Symbolic links are archived as links, never followed.
 */

export interface ArchiveEntry {
  /** Relative to the folder, `/`-separated; "" is the folder itself. */
  readonly path: string
  readonly kind: "file" | "directory" | "symlink"
  readonly mode: number
  readonly size: number
  readonly mtime: Date
  readonly linkTarget: string
  readonly uid: number
  readonly gid: number
}

/** A folder's entries, parents before children, and what they weigh. */
export interface FolderListing {
  readonly root: string
  readonly entries: ReadonlyArray<ArchiveEntry>
  readonly files: number
  readonly bytes: number
}

export const reason = (cause: unknown): string => (cause as NodeJS.ErrnoException).code ?? String(cause)

/** Opens a file without following a link put in its place since it was listed. */
const openFile = async (root: string, entry: ArchiveEntry): Promise<ReadStream> => {
  const handle = await open(join(root, entry.path), constants.O_RDONLY | constants.O_NOFOLLOW)
  return handle.createReadStream()
}

/** The entry of `path` (under `root`), or null for what is no file, folder or link (sockets, pipes, devices). */
export const entryOf = async (root: string, path: string): Promise<ArchiveEntry | null> => {
  const stat = await lstat(join(root, path))
  const kind = stat.isDirectory() ? "directory" : stat.isSymbolicLink() ? "symlink" : stat.isFile() ? "file" : null
  if (kind === null) return null
  return {
    path,
    kind,
    mode: stat.mode & 0o7777,
    size: kind === "file" ? stat.size : 0,
    mtime: stat.mtime,
    linkTarget: kind === "symlink" ? await readlink(join(root, path)) : "",
    uid: stat.uid,
    gid: stat.gid
  }
}

/** Every entry under `root`, `root` itself first. */
export const scanFolder = (root: string): Effect.Effect<FolderListing, FolderUnreadable> =>
  Effect.tryPromise({
    try: async () => {
      const entries: Array<ArchiveEntry> = []
      const visit = async (path: string): Promise<void> => {
        const entry = await entryOf(root, path)
        if (entry === null) return
        entries.push(entry)
        if (entry.kind !== "directory") return
        for (const name of (await readdir(join(root, path))).sort()) await visit(path === "" ? name : `${path}/${name}`)
      }
      await visit("")
      const files = entries.filter((entry) => entry.kind === "file")
      return { root, entries, files: files.length, bytes: files.reduce((sum, entry) => sum + entry.size, 0) }
    },
    catch: (cause) => new FolderUnreadable({ operation: "folder.read", detail: `${root}: ${reason(cause)}` })
  })

export interface PackOptions {
  /** Each entry's path in the archive is under this folder name (the folder itself becomes `prefix/`). */
  readonly prefix?: string
  /** Keep each entry's owner; otherwise everything is root's (a build context). */
  readonly owners: boolean
  /** Called after each file's content went into the archive, with its size. */
  readonly onFile?: (bytes: number) => void
}

/** The listed entries as a tar stream; it fails when a file changed or went away since it was listed. */
export const packEntries = (root: string, entries: ReadonlyArray<ArchiveEntry>, options: PackOptions): Readable => {
  const pack = tar.pack()
  const nameOf = (path: string) =>
    options.prefix === undefined ? path : path === "" ? `${options.prefix}/` : `${options.prefix}/${path}`
  const add = (entry: ArchiveEntry) =>
    new Promise<void>((done, fail) => {
      const header = {
        name: nameOf(entry.path),
        mode: entry.mode,
        mtime: entry.mtime,
        uid: options.owners ? entry.uid : 0,
        gid: options.owners ? entry.gid : 0
      }
      const callback = (error?: Error | null) => (error ? fail(error) : done())
      if (entry.kind === "directory") return void pack.entry({ ...header, type: "directory" }, callback)
      if (entry.kind === "symlink")
        return void pack.entry({ ...header, type: "symlink", linkname: entry.linkTarget }, callback)
      const sink = pack.entry({ ...header, type: "file", size: entry.size }, (error) => {
        if (!error) options.onFile?.(entry.size)
        callback(error)
      })
      openFile(root, entry).then((source) => {
        source.on("error", fail)
        source.pipe(sink)
      }, fail)
    })
  const write = async () => {
    for (const entry of entries) if (nameOf(entry.path) !== "") await add(entry)
    pack.finalize()
  }
  write().catch((error: Error) => pack.destroy(error))
  return pack
}

/** A tar stream of one small file (a marker), owned by root. */
export const packFile = (name: string, content: string): Readable => {
  const pack = tar.pack()
  pack.entry({ name, mode: 0o644, uid: 0, gid: 0 }, content)
  pack.finalize()
  return pack
}

/** A tar stream of one folder entry, owned by root, with `mode`: extracted over a folder, it sets both. */
export const packFolder = (name: string, mode: number): Readable => {
  const pack = tar.pack()
  pack.entry({ name, type: "directory", mode, uid: 0, gid: 0, mtime: new Date() })
  pack.finalize()
  return pack
}
