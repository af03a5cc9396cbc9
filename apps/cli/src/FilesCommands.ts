import type { PrboxClientShape } from "@prbox/client"
import { type SandboxId, terminalSafe } from "@prbox/domain"
import { DEFAULT_LIST_DEPTH, type FileEntry, MAX_LIST_DEPTH, MAX_READ_BYTES } from "@prbox/protocol"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { printJson, usageError } from "./Exit.ts"
import { idArgument, json, needsDaemon, note, resolveId } from "./Params.ts"

/**
 * A file's content or a diff, as the sandbox wrote it: made safe on a
 * terminal, byte for byte when piped (a file or another program reads it).
 */
const forReader = (text: string): string => (process.stdout.isTTY === true ? terminalSafe(text) : text)

/** The commands that look at a running sandbox's workspace from outside: a file, a folder, the changes. */

/** `--lines A:B`, `A:`, `:B` or `A`: the lines asked for, or why not. */
export const parseLines = (
  text: string
): { readonly startLine?: number; readonly endLine?: number } | { readonly error: string } => {
  const match = /^(\d*)(?::(\d*))?$/.exec(text.trim())
  const start = match?.[1] === "" ? undefined : Number(match?.[1])
  const end = match?.[2] === undefined ? start : match[2] === "" ? undefined : Number(match[2])
  if (match === null || start === 0 || end === 0 || (start !== undefined && end !== undefined && end < start)) {
    return { error: "--lines takes A:B, A:, :B or A (lines counted from 1, B not before A)" }
  }
  return { ...(start === undefined ? {} : { startLine: start }), ...(end === undefined ? {} : { endLine: end }) }
}

/** The file from `startLine` to `endLine`, page after page (each at most the API's largest read). */
const readAll = (client: PrboxClientShape, id: SandboxId, path: string, startLine: number, endLine?: number) =>
  Effect.gen(function* () {
    let from = startLine
    for (;;) {
      const page = yield* client.readFile(id, {
        path,
        startLine: from,
        ...(endLine === undefined ? {} : { endLine }),
        maxBytes: MAX_READ_BYTES
      })
      if (page.binary) return yield* note(`${path} is a binary file (${page.size} bytes); not printed`)
      process.stdout.write(forReader(page.content))
      const last = endLine ?? page.totalLines
      if (!page.truncated || page.endLine >= last) return
      // One line longer than a page cannot be paged by lines.
      if (!page.content.endsWith("\n")) {
        return yield* note(`line ${page.endLine} is longer than ${MAX_READ_BYTES} bytes; the rest is not printed`)
      }
      from = page.endLine + 1
    }
  })

const cat = Command.make(
  "cat",
  {
    id: idArgument,
    path: Argument.String("path").pipe(Argument.withDescription("a file, relative to the workspace")),
    lines: Flag.String("lines").pipe(
      Flag.withDescription("only lines A:B (A:, :B or one line A), counted from 1"),
      Flag.optional
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const range = Option.isSome(config.lines) ? parseLines(config.lines.value) : {}
      if ("error" in range) return yield* usageError(range.error)
      const view = yield* resolveId(client, config.id)
      if (config.json) {
        return printJson(yield* client.readFile(view.id, { path: config.path, ...range, maxBytes: MAX_READ_BYTES }))
      }
      yield* readAll(client, view.id, config.path, range.startLine ?? 1, range.endLine)
    })
  )
).pipe(
  Command.withDescription(
    "Print a file of a running sandbox's workspace (--lines 10:20 for a part). Read inside the container: symbolic links resolve there, and paths outside the workspace are refused."
  )
)

const entryLine = (entry: FileEntry) =>
  `${entry.size === null ? "-".padStart(10) : String(entry.size).padStart(10)}  ${entry.path}${
    entry.type === "directory" ? "/" : entry.type === "symlink" ? "@" : ""
  }`

// `prbox ls` lists sandboxes: a workspace's folder is `prbox files`.
const files = Command.make(
  "files",
  {
    id: idArgument,
    path: Argument.String("path").pipe(
      Argument.withDescription("a folder, relative to the workspace (default: the workspace)"),
      Argument.withDefault(".")
    ),
    depth: Flag.Int("depth").pipe(
      Flag.withDescription(`levels to list, 1..${MAX_LIST_DEPTH}`),
      Flag.withDefault(DEFAULT_LIST_DEPTH)
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      if (config.depth < 1 || config.depth > MAX_LIST_DEPTH) {
        return yield* usageError(`--depth must be between 1 and ${MAX_LIST_DEPTH}`)
      }
      const view = yield* resolveId(client, config.id)
      const listing = yield* client.listFiles(view.id, { path: config.path, depth: config.depth })
      if (config.json) return printJson(listing)
      for (const entry of listing.entries) process.stdout.write(`${terminalSafe(entryLine(entry))}\n`)
      if (listing.truncated) yield* note("the listing was cut; list a subfolder or pass a smaller --depth")
    })
  )
).pipe(
  Command.withDescription(
    "List a folder of a running sandbox's workspace: size (files), path; a folder ends in /, a symbolic link in @. .git is listed, its insides are not."
  )
)

const diff = Command.make(
  "diff",
  {
    id: idArgument,
    paths: Argument.String("paths").pipe(
      Argument.withDescription("only these files or folders, relative to the workspace"),
      Argument.variadic({ min: 0 })
    ),
    base: Flag.Boolean("base").pipe(
      Flag.withDescription(
        "the PR's own changes against its merge-base with the default branch, instead of the sandbox's"
      ),
      Flag.withDefault(false)
    ),
    stat: Flag.Boolean("stat").pipe(
      Flag.withDescription("a summary of changed files (git diff --stat)"),
      Flag.withDefault(false)
    ),
    json
  },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const result = yield* client.diff(view.id, {
        against: config.base ? "base" : "head",
        paths: config.paths,
        stat: config.stat,
        maxBytes: MAX_READ_BYTES
      })
      if (config.json) return printJson(result)
      process.stdout.write(forReader(result.diff))
      if (result.truncated) yield* note(`the diff was cut at ${MAX_READ_BYTES} bytes; pass paths or --stat`)
    })
  )
).pipe(
  Command.withDescription(
    "Show the changes made in a running sandbox since the PR's head, untracked files included (git runs in the container: the image needs git); --base: the PR's own changes against its base."
  )
)

export const filesCommands = [cat, files, diff] as const
