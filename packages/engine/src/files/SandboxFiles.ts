import type { ChangedFile, SandboxConflict, SandboxId, SandboxNotFound } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type { GitFailed, HostFailure, InvalidPath, RuntimeError, StoreFailure } from "../Errors.ts"
import type { FileListing } from "../exec/FileListing.ts"
import type { TooLarge } from "./Errors.ts"

/** A file's text, or the lines asked for; paths are relative to the workspace. */
export interface FileContent {
  readonly path: string
  readonly content: string
  /** The whole file's size in bytes. */
  readonly size: number
  readonly totalLines: number
  /** The first and last line in `content` (1-based; `endLine` < `startLine` when empty). */
  readonly startLine: number
  readonly endLine: number
  /** `content` stops before `endLine` asked for or the end: cut at `maxBytes`. */
  readonly truncated: boolean
  /** The file has NUL bytes: `content` is empty. */
  readonly binary: boolean
}

export type { FileEntry, FileListing, FileType } from "../exec/FileListing.ts"

export interface FileWritten {
  readonly path: string
  readonly bytes: number
  readonly created: boolean
}

export interface FileEdited {
  readonly path: string
  /** Which occurrence was replaced (1-based), of how many there were. */
  readonly occurrence: number
  readonly occurrences: number
  readonly bytes: number
}

export type DiffAgainst = "head" | "base"

export interface DiffResult {
  readonly against: DiffAgainst
  /** The commit compared from: the PR's head (`head`) or the merge-base with its base (`base`). */
  readonly from: string
  /** `workspace` (the sandbox's files, untracked included) or the PR's head commit. */
  readonly to: string
  /** What `from` is: "the PR's head", "merge-base with origin/main", ... */
  readonly description: string
  /** A unified diff, or `git diff --stat` with `stat`. */
  readonly diff: string
  readonly truncated: boolean
  /** `base`: the files the PR changes (within the paths asked for). */
  readonly files?: ReadonlyArray<ChangedFile>
}

/** `base`: the merge-base with the PR's base branch; `head`: the PR's head commit. */
export type PullRequestSide = "base" | "head"

/** One side of a file the PR changes, read from prbox's mirror. */
export interface PullRequestFile {
  readonly path: string
  readonly side: PullRequestSide
  readonly commit: string
  /** The commit has no file there. */
  readonly present: boolean
  /** The file has NUL bytes: `content` is empty. */
  readonly binary: boolean
  readonly content: string
}

export type FilesError =
  | SandboxNotFound
  | SandboxConflict
  | InvalidPath
  | TooLarge
  | RuntimeError
  | GitFailed
  | StoreFailure
  // The exec target check reads the workspace folder's owner on the host.
  | HostFailure

/**
 * The workspace's files and diffs of a running, unfenced sandbox, for the
 * CLI, the extension and agents alike. Paths are relative to the workspace
 * and confined to it (WorkspaceResolve.ts); every read is bounded; every
 * operation counts as activity.
 */
export interface SandboxFilesShape {
  readonly read: (
    id: SandboxId,
    request: {
      readonly path: string
      readonly startLine?: number
      readonly endLine?: number
      readonly maxBytes: number
    }
  ) => Effect.Effect<FileContent, FilesError>
  readonly list: (
    id: SandboxId,
    request: { readonly path: string; readonly depth: number }
  ) => Effect.Effect<FileListing, FilesError>
  /** Creates or replaces the file (and its missing folders) as the sandbox's user. */
  readonly write: (
    id: SandboxId,
    request: { readonly path: string; readonly content: string }
  ) => Effect.Effect<FileWritten, FilesError>
  /**
   * Replaces one occurrence of `search`: the only one, or the `occurrence`-th;
   * a SandboxConflict when it is absent, ambiguous or the file changed meanwhile.
   */
  readonly edit: (
    id: SandboxId,
    request: {
      readonly path: string
      readonly search: string
      readonly replace: string
      readonly occurrence?: number
    }
  ) => Effect.Effect<FileEdited, FilesError>
  readonly diff: (
    id: SandboxId,
    request: {
      readonly against: DiffAgainst
      readonly paths: ReadonlyArray<string>
      readonly stat: boolean
      readonly maxBytes: number
    }
  ) => Effect.Effect<DiffResult, FilesError>
  /** A file of the PR's head or of its merge-base with the base branch, from the mirror: a diff view's sides. */
  readonly pullRequestFile: (
    id: SandboxId,
    request: { readonly side: PullRequestSide; readonly path: string }
  ) => Effect.Effect<PullRequestFile, FilesError>
}

export class SandboxFiles extends Context.Service<SandboxFiles, SandboxFilesShape>()("prbox/engine/SandboxFiles") {}
