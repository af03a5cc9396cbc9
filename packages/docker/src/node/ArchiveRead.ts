import { constants } from "node:fs"
import { copyFile, mkdir, open, symlink } from "node:fs/promises"
import { join, posix } from "node:path"
import type { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Effect } from "effect"
import * as tar from "tar-stream"
import { FolderUnreadable } from "../DockerError.ts"

/*
 * Tar streams the engine sends (a folder of a container, `getArchive`), read
 * as data: names are checked, links are never followed, and nothing is
 * written outside the folder an extraction is given.
 */

/** What the first entry of an archive of one path is. */
export type ArchivedPath =
  | { readonly kind: "file"; readonly content: Buffer; readonly truncated: boolean }
  | { readonly kind: "directory" }
  | { readonly kind: "symlink"; readonly target: string }
  | { readonly kind: "other" }

const failed = (operation: string) => (cause: unknown) =>
  new FolderUnreadable({ operation, detail: cause instanceof Error ? cause.message : String(cause) })

/** Runs `onEntry` on each entry in turn; `stop` ends the read early (the rest is not read). */
const eachEntry = (
  archive: Readable,
  onEntry: (header: tar.Headers, body: Readable, stop: () => void) => Promise<void>
): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    const extract = tar.extract()
    let stopped = false
    const stop = () => {
      stopped = true
      extract.destroy()
      resolve()
    }
    extract.on("entry", (header, body, next) => {
      // The entry's stream says it ended only once: listened to before anyone reads it.
      let ended = false
      let read = false
      body.on("end", () => {
        ended = true
        if (read) next()
      })
      onEntry(header, body, stop).then(
        () => {
          if (stopped) return
          read = true
          if (ended) next()
          else body.resume()
        },
        (error: unknown) => {
          stopped = true
          extract.destroy()
          reject(error)
        }
      )
    })
    extract.on("finish", () => resolve())
    extract.on("error", (error) => (stopped ? undefined : reject(error)))
    archive.on("error", (error) => (stopped ? undefined : reject(error)))
    archive.pipe(extract)
  })

/** A body's bytes, up to `maxBytes` (then `truncated`, without waiting for the rest). */
const readBody = (body: Readable, maxBytes: number): Promise<{ content: Buffer; truncated: boolean }> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let done = false
    body.on("data", (chunk: Buffer) => {
      if (done) return
      if (size + chunk.length > maxBytes) {
        done = true
        chunks.push(chunk.subarray(0, maxBytes - size))
        resolve({ content: Buffer.concat(chunks), truncated: true })
        return
      }
      chunks.push(chunk)
      size += chunk.length
    })
    body.on("end", () => {
      if (done) return
      done = true
      resolve({ content: Buffer.concat(chunks), truncated: false })
    })
    body.on("error", reject)
  })

/** The archived path itself (the archive's first entry); a file's content up to `maxBytes`. */
export const readArchivedPath = (archive: Readable, maxBytes: number): Effect.Effect<ArchivedPath, FolderUnreadable> =>
  Effect.tryPromise({
    try: async () => {
      let found: ArchivedPath = { kind: "other" }
      await eachEntry(archive, async (header, body, stop) => {
        if (header.type === "file") found = { kind: "file", ...(await readBody(body, maxBytes)) }
        else if (header.type === "directory") found = { kind: "directory" }
        else if (header.type === "symlink") found = { kind: "symlink", target: header.linkname ?? "" }
        stop()
      })
      return found
    },
    catch: failed("archive.read")
  })

/**
 * The names and kinds of what an archived folder holds directly (at most
 * `maxEntries` of everything in it); undefined when the archived path is
 * no folder (a file, a link).
 */
export const listArchivedFolder = (
  archive: Readable,
  maxEntries: number
): Effect.Effect<
  ReadonlyArray<{ readonly name: string; readonly kind: "file" | "directory" | "other" }> | undefined,
  FolderUnreadable
> =>
  Effect.tryPromise({
    try: async () => {
      const children: Array<{ name: string; kind: "file" | "directory" | "other" }> = []
      let seen = 0
      let folder = true
      await eachEntry(archive, async (header, _body, stop) => {
        seen += 1
        if (seen === 1 && header.type !== "directory") {
          folder = false
          return stop()
        }
        if (seen > maxEntries) throw new Error(`holds more than ${maxEntries} entries`)
        const parts = header.name.replace(/\/+$/, "").split("/")
        if (parts.length !== 2) return
        const kind = header.type === "file" ? "file" : header.type === "directory" ? "directory" : "other"
        children.push({ name: parts[1] ?? "", kind })
      })
      return folder ? children : undefined
    },
    catch: failed("archive.list")
  })

/** Bounds and choices of an extraction. */
export interface ExtractOptions {
  /** At most this many bytes of files, and this many entries: a larger archive fails the extraction. */
  readonly maxBytes: number
  readonly maxEntries: number
  /** Paths (relative to the archived folder) left out, with all they hold. */
  readonly skip?: (path: string) => boolean
}

/**
 * Writes an archived folder into `destination` (an empty folder of ours):
 * files (permission bits only: no setuid), folders and links, as ours; a
 * hard link as a copy of the file it names. Every entry must name a path
 * inside, below a folder the archive itself made: an entry under a link,
 * or with `..`, fails the extraction, so no write ever goes through a link.
 * Special files (pipes, devices, sockets) are left out. Answers the name of
 * the archived folder (its first entry), or undefined when the archived
 * path is no folder (a file, a link): nothing is written.
 */
export const extractArchive = (
  archive: Readable,
  destination: string,
  options: ExtractOptions
): Effect.Effect<string | undefined, FolderUnreadable> =>
  Effect.tryPromise({
    try: async () => {
      const folders = new Set<string>([""])
      const files = new Set<string>()
      const skipped = new Set<string>()
      let root: string | undefined
      let entries = 0
      let bytes = 0
      await eachEntry(archive, async (header, body, stop) => {
        if (root === undefined) {
          if (header.type !== "directory") return stop()
          root = posix.normalize(header.name).replace(/\/+$/, "")
        }
        const name = posix.normalize(header.name).replace(/\/+$/, "")
        if (name === "." || header.name.split("/").includes("..") || posix.isAbsolute(name)) {
          throw new Error(`refused entry ${header.name}`)
        }
        const parent = posix.dirname(name) === "." ? "" : posix.dirname(name)
        const inside = name === root ? "" : name.slice(root.length + 1)
        if (skipped.has(parent) || (inside !== "" && options.skip?.(inside) === true)) {
          skipped.add(name)
          return
        }
        if (!folders.has(parent)) throw new Error(`refused entry ${name}: its folder is not one of the archive's`)
        entries += 1
        bytes += header.type === "file" ? (header.size ?? 0) : 0
        if (entries > options.maxEntries) throw new Error(`it holds more than ${options.maxEntries} entries`)
        if (bytes > options.maxBytes) throw new Error(`it holds more than ${options.maxBytes} bytes`)
        const target = join(destination, name)
        const mode = (header.mode ?? 0o644) & 0o777
        const exclusive = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
        if (header.type === "directory") {
          await mkdir(target, { mode: mode | 0o700 })
          folders.add(name)
        } else if (header.type === "symlink") {
          await symlink(header.linkname ?? "", target)
        } else if (header.type === "file") {
          await pipeline(body, (await open(target, exclusive, mode)).createWriteStream())
          files.add(name)
        } else if (header.type === "link") {
          // Only a file this extraction wrote: never a path through a link, never one of the machine's.
          const original = posix.normalize(header.linkname ?? "")
          if (!files.has(original)) throw new Error(`refused entry ${name}: a hard link to ${original}`)
          await copyFile(join(destination, original), target, constants.COPYFILE_EXCL)
          files.add(name)
        }
      })
      return root
    },
    catch: failed("archive.extract")
  })
