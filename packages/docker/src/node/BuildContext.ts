import { createHash } from "node:crypto"
import { constants } from "node:fs"
import { open, readdir } from "node:fs/promises"
import { isAbsolute, join, relative, resolve, sep } from "node:path"
import type { Readable } from "node:stream"
import dockerignore from "@balena/dockerignore"
import type { ImageBuildRequest } from "@prbox/domain"
import { Effect } from "effect"
import { ImageBuildFailed } from "../DockerError.ts"
import { type ArchiveEntry, entryOf, packEntries, reason } from "./FolderArchive.ts"

/*
 * A build's context: the files sent to the engine, and the hash of
 * everything that makes the image, which names it. Symbolic links are sent
 * and hashed as links, never followed: the context is a PR's content, and it
 * must not make us read files outside it.
 */

export type ContextEntry = ArchiveEntry

const failed = (detail: string) => new ImageBuildFailed({ operation: "image.build", detail })

const sorted = (record: Readonly<Record<string, string>>) =>
  Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

const contentHash = async (root: string, entry: ContextEntry): Promise<string> => {
  const hash = createHash("sha256")
  const file = await open(join(root, entry.path), constants.O_RDONLY | constants.O_NOFOLLOW)
  for await (const chunk of file.createReadStream()) hash.update(chunk as Buffer)
  return hash.digest("hex")
}

/** `.dockerignore` is read as any file of the context is: a link there is refused, never followed. */
const MAX_IGNORE_BYTES = 1024 * 1024

const readIgnoreFile = async (root: string): Promise<string> => {
  const file = await open(
    join(root, ".dockerignore"),
    constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
  ).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })
  if (file === undefined) return ""
  try {
    const info = await file.stat()
    if (!info.isFile()) throw new Error(".dockerignore is not a regular file")
    if (info.size > MAX_IGNORE_BYTES) throw new Error(`.dockerignore is larger than ${MAX_IGNORE_BYTES} bytes`)
    return await file.readFile("utf8")
  } finally {
    await file.close()
  }
}

/**
 * What a build leaves out of its context: `.git` and what `.dockerignore`'s
 * `patterns` exclude; `exceptions` when a pattern (`!dir/keep`) can bring
 * back a file under an excluded directory.
 */
const ignoreRules = (patterns: string) => ({
  // The package is CommonJS; its factory carries itself as `default` for this.
  // The workspace's own `.git` is prbox's checkout, not a build input (it differs per sandbox and would defeat reuse).
  rules: dockerignore.default({ ignorecase: false }).add(".git").add(patterns),
  exceptions: patterns.split("\n").some((line) => line.trim().startsWith("!"))
})

const walk = async (root: string, keep: ReadonlySet<string>): Promise<Array<ContextEntry>> => {
  const { rules, exceptions } = ignoreRules(await readIgnoreFile(root))
  const entries: Array<ContextEntry> = []
  const visit = async (dir: string): Promise<void> => {
    for (const name of (await readdir(join(root, dir))).sort()) {
      const path = dir === "" ? name : `${dir}/${name}`
      const entry = await entryOf(root, path)
      if (entry === null) continue // sockets, pipes and devices are not build inputs
      const excluded = rules.ignores(path) && !keep.has(path)
      if (!excluded) entries.push(entry)
      const needed = [...keep].some((kept) => kept.startsWith(`${path}/`))
      if (entry.kind === "directory" && (!excluded || exceptions || needed)) await visit(path)
    }
  }
  await visit("")
  return entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}

/**
 * What a copy of a context may leave out: what its build would (`.git`, and
 * what `.dockerignore`'s `patterns` exclude), except `keep` and the folders
 * on their way. Nothing when a pattern is an exception (`!dir/keep`), which
 * can bring back a path under an excluded folder.
 */
export const contextSkip = (patterns: string, keep: ReadonlyArray<string>): ((path: string) => boolean) => {
  const { rules, exceptions } = ignoreRules(patterns)
  if (exceptions) return () => false
  return (path) => rules.ignores(path) && !keep.some((kept) => kept === path || kept.startsWith(`${path}/`))
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

/** The listed entries as a tar stream, owned by root; it fails when a file changed or went away since it was listed. */
export const packContext = (root: string, entries: ReadonlyArray<ContextEntry>): Readable =>
  packEntries(root, entries, { owners: false })
