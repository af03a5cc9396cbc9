import { MAX_LIST_DEPTH, MAX_READ_BYTES, MAX_WRITE_BYTES } from "@prbox/protocol"
import { Effect } from "effect"
import * as z from "zod"
import { asSandboxId, sandboxId, workspacePath } from "./Schemas.ts"
import { defineTool } from "./Tool.ts"

/** The workspace's files and diffs. Every path is relative to the workspace and confined to it (inside the container). */

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

const readFile = defineTool({
  name: "sandbox_read_file",
  title: "Read a file",
  description:
    "Read a file of the workspace, whole or lines startLine..endLine (1-based), at most maxBytes (default 64 KiB). Answers size and totalLines so you can ask for the rest; a binary file returns no content.",
  input: {
    id: sandboxId,
    path: workspacePath,
    startLine: z.number().int().min(1).optional(),
    endLine: z.number().int().min(1).optional(),
    maxBytes: z.number().int().min(1).max(MAX_READ_BYTES).optional()
  },
  output: {
    path: z.string(),
    content: z.string(),
    size: z.number().int().describe("the whole file, in bytes"),
    totalLines: z.number().int(),
    startLine: z.number().int(),
    endLine: z.number().int(),
    truncated: z.boolean().describe("cut at maxBytes before endLine"),
    binary: z.boolean().describe("the file has NUL bytes: no content is returned")
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(
      client.readFile(asSandboxId(args.id), {
        path: args.path,
        ...optional("startLine", args.startLine),
        ...optional("endLine", args.endLine),
        ...optional("maxBytes", args.maxBytes)
      }),
      (file) => ({
        structured: { ...file },
        text: file.binary
          ? `${file.path}: binary file, ${file.size} bytes`
          : `${file.content}${file.truncated ? `\n[cut at maxBytes; lines ${file.startLine}..${file.endLine} of ${file.totalLines}]` : ""}`
      })
    )
})

const listFiles = defineTool({
  name: "sandbox_list_files",
  title: "List files",
  description: `List a folder of the workspace to depth levels (default 2, at most ${MAX_LIST_DEPTH}), sorted; .git's insides are left out.`,
  input: {
    id: sandboxId,
    path: workspacePath.optional().describe("the folder, relative to the workspace (default: the workspace)"),
    depth: z.number().int().min(1).max(MAX_LIST_DEPTH).optional()
  },
  output: {
    path: z.string(),
    entries: z.array(
      z.object({
        path: z.string().describe("relative to the workspace"),
        type: z.enum(["file", "directory", "symlink", "other"]),
        size: z.number().int().nullable()
      })
    ),
    truncated: z.boolean().describe("cut at the entry limit: list a subfolder")
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(
      client.listFiles(asSandboxId(args.id), { ...optional("path", args.path), ...optional("depth", args.depth) }),
      (listing) => ({
        structured: {
          path: listing.path,
          entries: listing.entries.map((entry) => ({ ...entry })),
          truncated: listing.truncated
        },
        text: [
          ...listing.entries.map((entry) =>
            entry.type === "directory" ? `${entry.path}/` : entry.type === "symlink" ? `${entry.path} ->` : entry.path
          ),
          ...(listing.truncated ? ["[listing cut: list a subfolder]"] : [])
        ].join("\n")
      })
    )
})

const writeFile = defineTool({
  name: "sandbox_write_file",
  title: "Write a file",
  description: `Write a whole file of the workspace (created with its folders when missing, replaced otherwise); at most ${MAX_WRITE_BYTES} bytes. For a small change prefer sandbox_edit_file.`,
  input: { id: sandboxId, path: workspacePath, content: z.string().max(MAX_WRITE_BYTES) },
  output: { path: z.string(), bytes: z.number().int(), created: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  run: (client, args) =>
    Effect.map(client.writeFile(asSandboxId(args.id), { path: args.path, content: args.content }), (written) => ({
      structured: { ...written },
      text: `${written.created ? "created" : "wrote"} ${written.path} (${written.bytes} bytes)`
    }))
})

const editFile = defineTool({
  name: "sandbox_edit_file",
  title: "Edit a file",
  description:
    "Replace one occurrence of `search` (exact text, whitespace included) by `replace` in a file of the workspace. When `search` occurs several times, pass `occurrence` (1-based); a conflict error says how many there are.",
  input: {
    id: sandboxId,
    path: workspacePath,
    search: z.string().min(1).max(MAX_WRITE_BYTES),
    replace: z.string().max(MAX_WRITE_BYTES),
    occurrence: z.number().int().min(1).optional()
  },
  output: {
    path: z.string(),
    occurrence: z.number().int(),
    occurrences: z.number().int().describe("how many times `search` occurred"),
    bytes: z.number().int().describe("the file's size after the edit")
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  run: (client, args) =>
    Effect.map(
      client.editFile(asSandboxId(args.id), {
        path: args.path,
        search: args.search,
        replace: args.replace,
        ...optional("occurrence", args.occurrence)
      }),
      (edited) => ({
        structured: { ...edited },
        text: `edited ${edited.path}: occurrence ${edited.occurrence} of ${edited.occurrences}`
      })
    )
})

const diff = defineTool({
  name: "sandbox_diff",
  title: "Diff the workspace",
  description: [
    "A unified diff. against `head`: the changes made in the sandbox since the PR's head commit (untracked files included);",
    "against `base`: the PR's own changes against its base branch. `stat: true` gives a summary of files changed;",
    "`paths` narrows it to some files or folders; the diff is cut at maxBytes (truncated: true)."
  ].join(" "),
  input: {
    id: sandboxId,
    against: z.enum(["head", "base"]),
    paths: z.array(workspacePath).max(100).optional(),
    stat: z.boolean().optional(),
    maxBytes: z.number().int().min(1).max(MAX_READ_BYTES).optional()
  },
  output: {
    against: z.enum(["head", "base"]),
    from: z.string().describe("the commit the diff starts from"),
    to: z.string().describe("the commit, or `workspace`, it ends at"),
    description: z.string(),
    diff: z.string(),
    truncated: z.boolean()
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  run: (client, args) =>
    Effect.map(
      client.diff(asSandboxId(args.id), {
        against: args.against,
        ...optional("paths", args.paths),
        ...optional("stat", args.stat),
        ...optional("maxBytes", args.maxBytes)
      }),
      (result) => ({
        structured: { ...result },
        text: `${result.description}\n${result.diff === "" ? "(no changes)" : result.diff}${result.truncated ? "\n[diff cut at maxBytes]" : ""}`
      })
    )
})

export const fileTools = [readFile, listFiles, writeFile, editFile, diff] as const
