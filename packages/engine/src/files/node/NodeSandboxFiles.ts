import {
  boundText,
  MAX_LIST_ENTRIES,
  MAX_READ_BYTES,
  MAX_WRITE_BYTES,
  replaceOccurrence,
  SandboxConflict,
  type SandboxId
} from "@prbox/domain"
import { Effect, Layer } from "effect"
import { ContainerRuntime } from "../../ContainerRuntime.ts"
import { InvalidPath, RuntimeError } from "../../Errors.ts"
import { type ExecTarget, ExecTargets } from "../../exec/ExecTarget.ts"
import { runScript, unexpectedExit } from "../../exec/FileExec.ts"
import { parseListing } from "../../exec/FileListing.ts"
import { EDIT_READ_SH, EXIT, LIST_SH, READ_SH, WRITE_SH } from "../../exec/FileScripts.ts"
import { checkWorkspacePath, resolveFailure } from "../../exec/WorkspaceResolve.ts"
import { TooLarge } from "../Errors.ts"
import {
  type FileContent,
  type FileEdited,
  type FileWritten,
  SandboxFiles,
  type SandboxFilesShape
} from "../SandboxFiles.ts"
import { WorkspaceDiff } from "../WorkspaceDiff.ts"

const encoder = new TextEncoder()
const byteLength = (text: string): number => encoder.encode(text).length

/** The refusal an exit code of a file script means (the resolver's first), else an unexpected failure. */
const refusal = (target: ExecTarget, path: string, operation: string, exitCode: number) => {
  const invalid = (reason: string) => new InvalidPath({ id: target.id, path, reason })
  switch (exitCode) {
    case EXIT.isDirectory:
      return invalid(operation === "read" ? "is a directory; use list" : "is a directory")
    case EXIT.notRegularFile:
      return invalid("is not a regular file")
    case EXIT.notDirectory:
      return invalid("is not a directory; use read")
    case EXIT.cannotRead:
      return invalid("cannot be read by the sandbox's user")
    case EXIT.cannotWrite:
      return invalid("cannot be written (a folder on the way is a file, or the sandbox's user may not write there)")
    case EXIT.tooLarge:
      return new TooLarge({
        id: target.id,
        reason: `${path} is larger than ${MAX_WRITE_BYTES} bytes, more than an edit takes; change it with exec`
      })
    case EXIT.changed:
      return new SandboxConflict({ id: target.id, reason: `${path} changed while being edited; try again` })
    default:
      return resolveFailure(target.id, path, exitCode) ?? unexpectedExit(`file ${operation}`, exitCode)
  }
}

/** The first line of a script's answer (its facts) and the rest. */
const splitHeader = (stdout: string, operation: string) => {
  const newline = stdout.indexOf("\n")
  return newline < 0
    ? Effect.fail(new RuntimeError({ operation, detail: "the sandbox's answer has no header line" }))
    : Effect.succeed({ header: stdout.slice(0, newline), body: stdout.slice(newline + 1) })
}

/**
 * SandboxFiles on the container runtime: every operation passes the exec
 * target check (running, unfenced, activity), the lexical path check, then
 * runs ONE script in the container (FileScripts.ts) as the sandbox's user,
 * where symbolic links resolve as the sandbox sees them. The daemon never
 * touches the workspace's files on the host for these.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const execTarget = yield* ExecTargets
  const { diff, pullRequestFile } = yield* WorkspaceDiff

  /** The target and the path in it, checked. */
  const locate = (id: SandboxId, path: string, what: string) =>
    Effect.flatMap(execTarget(id, what), (target) =>
      Effect.map(checkWorkspacePath(target, path), (checked) => ({ target, ...checked }))
    )

  const read = Effect.fn("SandboxFiles.read")(function* (
    id: SandboxId,
    request: Parameters<SandboxFilesShape["read"]>[1]
  ) {
    const { target, relative, absolute } = yield* locate(id, request.path, "reading a file")
    const startLine = request.startLine ?? 1
    const lastLine = request.endLine === undefined ? "$" : String(Math.max(request.endLine, startLine))
    const maxBytes = Math.min(request.maxBytes, MAX_READ_BYTES)
    const outcome = yield* runScript(
      runtime,
      target,
      "file read",
      READ_SH,
      [target.workspaceFolder, absolute, String(startLine), lastLine, String(maxBytes + 1)],
      { outputBytes: maxBytes + 256 }
    )
    if (outcome.exitCode !== 0) return yield* refusal(target, relative, "read", outcome.exitCode)
    const { header, body } = yield* splitHeader(outcome.stdout, "file read")
    const facts = header.split(" ").map(Number)
    const [size = NaN, totalLines = NaN, nuls = NaN, unterminated = NaN] = facts
    if (facts.length !== 4 || facts.some(Number.isNaN)) {
      return yield* new RuntimeError({ operation: "file read", detail: "the sandbox's answer is not understood" })
    }
    const binary = nuls > 0 || body.includes("\0")
    // An end before the start asks for nothing.
    const empty = binary || (request.endLine !== undefined && request.endLine < startLine)
    const bounded = empty ? { text: "", truncated: false, lines: 0 } : boundText(body, maxBytes)
    const reachesEnd = !bounded.truncated && startLine + bounded.lines - 1 === totalLines
    const text =
      reachesEnd && unterminated === 1 && bounded.text.endsWith("\n") ? bounded.text.slice(0, -1) : bounded.text
    const content: FileContent = {
      path: relative,
      content: text,
      size,
      totalLines,
      startLine,
      endLine: startLine + bounded.lines - 1,
      truncated: bounded.truncated,
      binary
    }
    return content
  })

  const list = Effect.fn("SandboxFiles.list")(function* (
    id: SandboxId,
    request: { readonly path: string; readonly depth: number }
  ) {
    const { target, relative, absolute } = yield* locate(id, request.path, "listing files")
    const outcome = yield* runScript(
      runtime,
      target,
      "file list",
      LIST_SH,
      [target.workspaceFolder, absolute, String(Math.max(1, request.depth)), String(MAX_READ_BYTES)],
      { outputBytes: MAX_READ_BYTES }
    )
    if (outcome.exitCode !== 0) return yield* refusal(target, relative, "list", outcome.exitCode)
    return parseListing(relative, outcome.stdout, { maxEntries: MAX_LIST_ENTRIES, maxBytes: MAX_READ_BYTES })
  })

  /** Writes `content` over the file; with `expectedSum`, only while the file still has that checksum. */
  const writeFile = (target: ExecTarget, relative: string, absolute: string, content: string, expectedSum = "") =>
    Effect.gen(function* () {
      const bytes = encoder.encode(content)
      if (bytes.length > MAX_WRITE_BYTES) {
        return yield* new TooLarge({
          id: target.id,
          reason: `${bytes.length} bytes are more than a write takes (${MAX_WRITE_BYTES}); write a large file with exec`
        })
      }
      const outcome = yield* runScript(
        runtime,
        target,
        "file write",
        WRITE_SH,
        [target.workspaceFolder, absolute, expectedSum],
        { outputBytes: 16, stdin: bytes }
      )
      if (outcome.exitCode !== 0) return yield* refusal(target, relative, "write", outcome.exitCode)
      return { bytes: bytes.length, created: outcome.stdout.trim() === "1" }
    })

  const write = Effect.fn("SandboxFiles.write")(function* (
    id: SandboxId,
    request: { readonly path: string; readonly content: string }
  ) {
    const { target, relative, absolute } = yield* locate(id, request.path, "writing a file")
    const written = yield* writeFile(target, relative, absolute, request.content)
    const result: FileWritten = { path: relative, ...written }
    return result
  })

  const edit = Effect.fn("SandboxFiles.edit")(function* (
    id: SandboxId,
    request: Parameters<SandboxFilesShape["edit"]>[1]
  ) {
    const { target, relative, absolute } = yield* locate(id, request.path, "editing a file")
    const outcome = yield* runScript(
      runtime,
      target,
      "file edit",
      EDIT_READ_SH,
      [target.workspaceFolder, absolute, String(MAX_WRITE_BYTES)],
      { outputBytes: MAX_WRITE_BYTES + 256 }
    )
    if (outcome.exitCode !== 0) return yield* refusal(target, relative, "edit", outcome.exitCode)
    const { header, body: text } = yield* splitHeader(outcome.stdout, "file edit")
    const space = header.indexOf(" ")
    const size = Number(header.slice(0, space))
    const sum = header.slice(space + 1)
    // Decoding replaced bytes that are not UTF-8 (the text got longer): writing it back would change them.
    if (space < 0 || byteLength(text) !== size || text.includes("\0")) {
      return yield* new InvalidPath({
        id,
        path: relative,
        reason: "is not UTF-8 text (or changed while being read); edit works on text files"
      })
    }
    const conflict = (reason: string) => new SandboxConflict({ id, reason: `${relative}: ${reason}` })
    const decision = replaceOccurrence(text, request.search, request.replace, request.occurrence)
    switch (decision._tag) {
      case "Absent":
        return yield* conflict("the search text does not occur; read the file again")
      case "Ambiguous":
        return yield* conflict(
          `the search text occurs ${decision.occurrences} times; pass occurrence 1..${decision.occurrences}, or a longer search text`
        )
      case "OutOfRange":
        return yield* conflict(
          `the search text occurs ${decision.occurrences} time(s); occurrence ${decision.occurrence} is not one of them`
        )
    }
    const written = yield* writeFile(target, relative, absolute, decision.text, sum)
    const result: FileEdited = {
      path: relative,
      occurrence: decision.occurrence,
      occurrences: decision.occurrences,
      bytes: written.bytes
    }
    return result
  })

  return SandboxFiles.of({ read, list, write, edit, diff, pullRequestFile })
})

export const layer = Layer.effect(SandboxFiles, make).pipe(
  Layer.provide(WorkspaceDiff.layer.pipe(Layer.provideMerge(ExecTargets.layer)))
)
