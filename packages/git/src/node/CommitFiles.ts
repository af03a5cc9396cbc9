import * as NodePath from "node:path"
import { Effect, FileSystem } from "effect"
import { GitCommandFailed, UnsafeArgument } from "../Errors.ts"
import { Git } from "../Git.ts"
import { commitPattern } from "../GitFiles.ts"
import { stderrTail } from "../Redact.ts"
import type { CommitEntry, CommitFiles } from "../Workspaces.ts"
import { fsStep } from "./MirrorFiles.ts"

/** PR content: a file larger than this is not configuration and is refused. */
const MAX_FILE_BYTES = 1024 * 1024

interface TreeLine {
  readonly mode: string
  readonly type: string
  readonly object: string
  readonly size: string
  readonly name: string
}

// `git ls-tree -z --long`: "<mode> <type> <object> <size>\t<name>\0".
const parseTree = (stdout: string): ReadonlyArray<TreeLine> =>
  stdout
    .split("\0")
    .filter((entry) => entry.length > 0)
    .flatMap((entry) => {
      const tab = entry.indexOf("\t")
      const [mode, type, object, size] = entry.slice(0, tab).trim().split(/\s+/)
      return tab < 0 || mode === undefined || type === undefined || object === undefined || size === undefined
        ? []
        : [{ mode, type, object, size, name: entry.slice(tab + 1) }]
    })

const isSafePath = (path: string): boolean =>
  path.length > 0 &&
  !path.startsWith("/") &&
  !path.startsWith("-") &&
  path.split("/").every((part) => part.length > 0 && part !== "." && part !== "..")

/**
 * How many commits' listings, and files' texts, a daemon keeps (an open
 * reads its base's on every open); a commit with a listing longer than
 * KEPT_LINES, or a text over KEPT_TEXT_BYTES (a PR's choosing), is its
 * reader's alone, so what is kept stays a few MiB at most.
 */
const KEPT_COMMITS = 8
const KEPT_TEXTS = 32
const KEPT_LINES = 500
const KEPT_TEXT_BYTES = 64 * 1024

/** `map` with `key` set, the oldest entry dropped past `limit` (a Map keeps insertion order). */
const keep = <V>(map: Map<string, V>, key: string, value: V, limit: number) => {
  map.delete(key)
  map.set(key, value)
  if (map.size > limit) map.delete(map.keys().next().value ?? "")
  return value
}

/**
 * A commit's files, read by git in its mirror (the daemon's own). A
 * commit's tree and a blob never change: what was read is kept for the
 * next reader of the same commit (an open's base branch, read again by
 * every open until it moves), failures never.
 */
export const commitFileReaders = Effect.fnUntraced(function* (timeoutMs: number) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem
  const commits = new Map<string, Map<string, ReadonlyArray<TreeLine>>>()
  const texts = new Map<string, string>()
  return (mirrorPath: string, commit: string): CommitFiles => {
    const gitOk = (operation: string, args: ReadonlyArray<string>) =>
      git
        .run(args, { cwd: mirrorPath, timeoutMs })
        .pipe(
          Effect.flatMap((output) =>
            output.exitCode === 0
              ? Effect.succeed(output.stdout)
              : Effect.fail(
                  new GitCommandFailed({ operation, detail: stderrTail(output.stderr), exitCode: output.exitCode })
                )
          )
        )
    const checked = (operation: string, path: string, root = false) =>
      !commitPattern.test(commit)
        ? Effect.fail(new UnsafeArgument({ operation, detail: "the commit must be a full hexadecimal object id" }))
        : !isSafePath(path) && !(root && path === "")
          ? Effect.fail(new UnsafeArgument({ operation, detail: `${JSON.stringify(path)} is not a repository path` }))
          : Effect.void
    // One `ls-tree` a folder, kept for this reader: looking for a file in the
    // folders devcontainer.json may be in costs a git process each, not one a path.
    const commitKey = `${mirrorPath}\0${commit}`
    const listings = keep(
      commits,
      commitKey,
      commits.get(commitKey) ?? new Map<string, ReadonlyArray<TreeLine>>(),
      KEPT_COMMITS
    )
    /**
     * A top-level folder is listed with the root in the same process (the
     * devcontainer lookup reads both). `<folder>/` stands for what is inside
     * the folder, so git's root listing lacks the folder itself: it is added
     * back; a file of that name stays in it.
     */
    const record = (folder: string, lines: ReadonlyArray<TreeLine>) => {
      listings.set(folder, lines)
      if (lines.length > KEPT_LINES) commits.delete(commitKey)
      return lines
    }
    const keepWithRoot = (folder: string, lines: ReadonlyArray<TreeLine>) => {
      const inside = lines.filter((line) => line.name.startsWith(`${folder}/`))
      // The folder itself stands in the root's listing (as a tree) when it holds anything: a listing of the root shows it.
      const itself = inside.length === 0 ? [] : [{ mode: "040000", type: "tree", object: "", size: "-", name: folder }]
      record("", [...lines.filter((line) => !line.name.includes("/")), ...itself])
      return record(folder, inside)
    }
    const listing = (operation: string, folder: string) =>
      Effect.suspend(() => {
        const known = listings.get(folder)
        if (known !== undefined) return Effect.succeed(known)
        const withRoot = folder !== "" && !folder.includes("/") && !listings.has("")
        // `<folder>/` names what is inside the folder (nothing when it is not one); `./` the root's entries.
        const paths = folder === "" ? [] : ["--", ...(withRoot ? ["./"] : []), `${folder}/`]
        return gitOk(operation, ["ls-tree", "-z", "--long", commit, ...paths]).pipe(
          Effect.map(parseTree),
          Effect.map((lines) => (withRoot ? keepWithRoot(folder, lines) : record(folder, lines)))
        )
      })
    const entry = (operation: string, path: string) =>
      checked(operation, path).pipe(
        Effect.andThen(listing(operation, NodePath.posix.dirname(path).replace(/^\.$/, ""))),
        Effect.map((lines) => lines.find((line) => line.name === path))
      )
    /** A file's entry, bounded: undefined when there is none; a link or a larger file refused. */
    const blob = (operation: string, path: string, maxBytes: number) =>
      Effect.gen(function* () {
        const found = yield* entry(operation, path)
        if (found === undefined || found.type !== "blob") return undefined
        // A symbolic link's target is a path, not the file: never follow it (it could name a host file).
        if (found.mode === "120000") {
          return yield* new UnsafeArgument({ operation, detail: `${path} is a symbolic link` })
        }
        if (Number(found.size) > maxBytes) {
          return yield* new UnsafeArgument({ operation, detail: `${path} is larger than ${maxBytes} bytes` })
        }
        return found
      })
    return {
      read: (path) =>
        Effect.gen(function* () {
          const found = yield* blob("commit.read", path, MAX_FILE_BYTES)
          if (found === undefined) return undefined
          const textKey = `${mirrorPath}\0${found.object}`
          const known = texts.get(textKey)
          if (known !== undefined) return known
          const text = yield* gitOk("commit.read", ["cat-file", "blob", found.object])
          return text.length > KEPT_TEXT_BYTES ? text : keep(texts, textKey, text, KEPT_TEXTS)
        }),
      // git's output is read as text: `unpack-file` writes the blob's bytes to a file of a private folder instead.
      readBytes: (path, maxBytes) =>
        Effect.scoped(
          Effect.gen(function* () {
            const operation = "commit.readBytes"
            const found = yield* blob(operation, path, maxBytes)
            if (found === undefined) return undefined
            const dir = yield* fsStep("make a folder for a commit's file", fs.makeTempDirectoryScoped())
            const written = yield* git
              .run([`--git-dir=${NodePath.resolve(mirrorPath)}`, "unpack-file", found.object], { cwd: dir, timeoutMs })
              .pipe(
                Effect.flatMap((output) =>
                  output.exitCode === 0
                    ? Effect.succeed(output.stdout.trim())
                    : Effect.fail(
                        new GitCommandFailed({
                          operation,
                          detail: stderrTail(output.stderr),
                          exitCode: output.exitCode
                        })
                      )
                )
              )
            return yield* fsStep(`read ${path}`, fs.readFile(NodePath.join(dir, NodePath.basename(written))))
          })
        ),
      list: (dir) =>
        Effect.gen(function* () {
          const operation = "commit.list"
          // "" is the root: listed, never read.
          yield* checked(operation, dir, true)
          const lines = yield* listing(operation, dir)
          if (lines.length === 0) return undefined
          return lines.flatMap((line): ReadonlyArray<CommitEntry> => {
            const name = dir === "" ? line.name : line.name.slice(dir.length + 1)
            if (line.type === "tree") return [{ name, type: "dir" }]
            return line.type === "blob" && line.mode !== "120000" ? [{ name, type: "file" }] : []
          })
        })
    }
  }
})
