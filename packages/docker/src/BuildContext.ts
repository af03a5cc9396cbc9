import { createHash } from "node:crypto"
import { constants, type ReadStream } from "node:fs"
import { lstat, open, readdir, readFile, readlink } from "node:fs/promises"
import { isAbsolute, join, relative, resolve, sep } from "node:path"
import type { Readable } from "node:stream"
import dockerignore from "@balena/dockerignore"
import type { ImageBuildRequest } from "@prbox/domain"
import { Effect } from "effect"
import * as tar from "tar-stream"
import { ImageBuildFailed } from "./DockerError.ts"

/*
 * A build's context: the files sent to the engine, and the hash of
 * everything that makes the image, which names it. Symbolic links are sent
 * and hashed as links, never followed: the context is a PR's content, and it
 * must not make us read files outside it.
 */

export interface ContextEntry {
  /** Relative to the context, `/`-separated. */
  readonly path: string
  readonly kind: "file" | "directory" | "symlink"
  readonly mode: number
  readonly size: number
  readonly mtime: Date
  readonly linkTarget: string
}

const failed = (detail: string) => new ImageBuildFailed({ operation: "image.build", detail })

/** Opens a context file without following a link put in its place since it was listed. */
const openFile = async (root: string, entry: ContextEntry): Promise<ReadStream> => {
  const handle = await open(join(root, entry.path), constants.O_RDONLY | constants.O_NOFOLLOW)
  return handle.createReadStream()
}

const reason = (cause: unknown): string => (cause as NodeJS.ErrnoException).code ?? String(cause)

const sorted = (record: Readonly<Record<string, string>>) =>
  Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

const contentHash = async (root: string, entry: ContextEntry): Promise<string> => {
  const hash = createHash("sha256")
  for await (const chunk of await openFile(root, entry)) hash.update(chunk as Buffer)
  return hash.digest("hex")
}

const walk = async (root: string, keep: ReadonlySet<string>): Promise<Array<ContextEntry>> => {
  const patterns = await readFile(join(root, ".dockerignore"), "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return ""
    throw error
  })
  // The package is CommonJS; its factory carries itself as `default` for this.
  // The workspace's own `.git` is prbox's checkout, not a build input (it differs per sandbox and would defeat reuse).
  const rules = dockerignore.default({ ignorecase: false }).add(".git").add(patterns)
  // An exception (`!dir/keep`) can bring back a file under an excluded directory.
  const exceptions = patterns.split("\n").some((line) => line.trim().startsWith("!"))
  const entries: Array<ContextEntry> = []
  const visit = async (dir: string): Promise<void> => {
    for (const name of (await readdir(join(root, dir))).sort()) {
      const path = dir === "" ? name : `${dir}/${name}`
      const stat = await lstat(join(root, path))
      const kind = stat.isDirectory() ? "directory" : stat.isSymbolicLink() ? "symlink" : stat.isFile() ? "file" : null
      if (kind === null) continue // sockets, pipes and devices are not build inputs
      const excluded = rules.ignores(path) && !keep.has(path)
      const linkTarget = kind === "symlink" ? await readlink(join(root, path)) : ""
      if (!excluded) {
        entries.push({
          path,
          kind,
          mode: stat.mode & 0o7777,
          size: kind === "file" ? stat.size : 0,
          mtime: stat.mtime,
          linkTarget
        })
      }
      const needed = [...keep].some((kept) => kept.startsWith(`${path}/`))
      if (kind === "directory" && (!excluded || exceptions || needed)) await visit(path)
    }
  }
  await visit("")
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * Lists the context (honouring a `.dockerignore` at its root; the Dockerfile
 * and `.dockerignore` are always sent) and hashes it with the request's
 * other inputs. The Dockerfile must be a regular file inside the context.
 */
export const scanContext = (request: ImageBuildRequest) =>
  Effect.gen(function* () {
    const root = resolve(request.contextDir)
    const dockerfile = relative(root, resolve(root, request.dockerfile))
    if (dockerfile === "" || dockerfile.startsWith("..") || isAbsolute(dockerfile)) {
      return yield* failed(`the Dockerfile ${request.dockerfile} is outside the build context ${request.contextDir}`)
    }
    const dockerfilePath = dockerfile.split(sep).join("/")
    const entries = yield* Effect.tryPromise({
      try: () => walk(root, new Set([dockerfilePath, ".dockerignore"])),
      catch: (cause) => failed(`cannot read the build context ${request.contextDir}: ${reason(cause)}`)
    })
    if (!entries.some((entry) => entry.path === dockerfilePath && entry.kind === "file")) {
      return yield* failed(
        `the Dockerfile ${request.dockerfile} is not a file in the build context ${request.contextDir}`
      )
    }
    const hash = createHash("sha256")
    const field = (...parts: ReadonlyArray<string>) => hash.update(`${parts.join("\0")}\n`)
    for (const entry of entries) {
      const content =
        entry.kind === "file"
          ? yield* Effect.tryPromise({
              try: () => contentHash(root, entry),
              catch: (cause) => failed(`cannot read ${entry.path} in the build context: ${reason(cause)}`)
            })
          : entry.linkTarget
      field("entry", entry.kind, entry.path, entry.mode.toString(8), content)
    }
    field("dockerfile", dockerfilePath)
    for (const [key, value] of sorted(request.args)) field("arg", key, value)
    field("target", request.target ?? "")
    for (const [key, value] of sorted(request.labels)) field("label", key, value)
    return { root, dockerfile: dockerfilePath, entries, hash: hash.digest("hex") }
  })

/** The listed entries as a tar stream; it fails when a file changed or went away since it was listed. */
export const packContext = (root: string, entries: ReadonlyArray<ContextEntry>): Readable => {
  const pack = tar.pack()
  const add = (entry: ContextEntry) =>
    new Promise<void>((done, fail) => {
      const header = { name: entry.path, mode: entry.mode, mtime: entry.mtime, uid: 0, gid: 0 }
      const callback = (error?: Error | null) => (error ? fail(error) : done())
      if (entry.kind === "directory") return void pack.entry({ ...header, type: "directory" }, callback)
      if (entry.kind === "symlink")
        return void pack.entry({ ...header, type: "symlink", linkname: entry.linkTarget }, callback)
      const sink = pack.entry({ ...header, type: "file", size: entry.size }, callback)
      openFile(root, entry).then((source) => {
        source.on("error", fail)
        source.pipe(sink)
      }, fail)
    })
  const write = async () => {
    for (const entry of entries) await add(entry)
    pack.finalize()
  }
  write().catch((error: Error) => pack.destroy(error))
  return pack
}
