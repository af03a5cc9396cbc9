import { ChangedFile, MAX_LIST_DEPTH, MAX_READ_BYTES, MAX_WRITE_BYTES, SandboxId } from "@prbox/domain"
import { Schema } from "effect"
import { ExecRequest, WorkspacePathParam } from "./Wire.ts"

// The wire shapes of a running sandbox's files, diffs and background jobs:
// what the CLI (`prbox cat`, `prbox diff`, `prbox exec --background`), the
// extension and `prbox mcp` share. Paths are relative to the workspace.

const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Line = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

// The bounds the engine enforces too (domain WorkspacePath.ts).
export { MAX_LIST_DEPTH, MAX_LIST_ENTRIES, MAX_READ_BYTES, MAX_WRITE_BYTES } from "@prbox/domain"
export const DEFAULT_READ_BYTES = 64 * 1024
export const DEFAULT_LIST_DEPTH = 2
/** Job output the daemon keeps per job: its last bytes (the engine's bound). */
export { JOB_OUTPUT_KEPT } from "@prbox/domain"

const ReadBytes = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_READ_BYTES }))

export const FileReadQuery = {
  path: WorkspacePathParam,
  startLine: Schema.optionalKey(Line),
  endLine: Schema.optionalKey(Line),
  maxBytes: Schema.optionalKey(ReadBytes)
}

export const FileContent = Schema.Struct({
  path: Schema.String,
  content: Schema.String,
  /** The whole file, in bytes. */
  size: NonNegativeInt,
  totalLines: NonNegativeInt,
  startLine: Line,
  endLine: NonNegativeInt,
  /** Cut at `maxBytes` before the end asked for. */
  truncated: Schema.Boolean,
  /** The file has NUL bytes: no content is returned. */
  binary: Schema.Boolean
})
export type FileContent = typeof FileContent.Type

export const FileListQuery = {
  path: Schema.optionalKey(WorkspacePathParam),
  depth: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_LIST_DEPTH })))
}

export const FileEntry = Schema.Struct({
  path: Schema.String,
  type: Schema.Literals(["file", "directory", "symlink", "other"]),
  size: Schema.NullOr(NonNegativeInt)
})
export type FileEntry = typeof FileEntry.Type

export const FileListing = Schema.Struct({
  path: Schema.String,
  entries: Schema.Array(FileEntry),
  truncated: Schema.Boolean
})
export type FileListing = typeof FileListing.Type

export const FileWriteRequest = Schema.Struct({
  path: WorkspacePathParam.check(Schema.isMinLength(1)),
  content: Schema.String.check(Schema.isMaxLength(MAX_WRITE_BYTES))
})
export type FileWriteRequest = typeof FileWriteRequest.Type

export const FileWritten = Schema.Struct({ path: Schema.String, bytes: NonNegativeInt, created: Schema.Boolean })
export type FileWritten = typeof FileWritten.Type

export const FileEditRequest = Schema.Struct({
  path: WorkspacePathParam.check(Schema.isMinLength(1)),
  search: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(MAX_WRITE_BYTES)),
  replace: Schema.String.check(Schema.isMaxLength(MAX_WRITE_BYTES)),
  /** Which occurrence to replace (1-based); needed when `search` occurs more than once. */
  occurrence: Schema.optionalKey(Line)
})
export type FileEditRequest = typeof FileEditRequest.Type

export const FileEdited = Schema.Struct({
  path: Schema.String,
  occurrence: Line,
  occurrences: Line,
  bytes: NonNegativeInt
})
export type FileEdited = typeof FileEdited.Type

export const DiffRequest = Schema.Struct({
  /** `head`: the sandbox's changes since the PR's head (untracked files too); `base`: the PR's own changes. */
  against: Schema.Literals(["head", "base"]),
  paths: Schema.optionalKey(Schema.Array(WorkspacePathParam).check(Schema.isMaxLength(100))),
  stat: Schema.optionalKey(Schema.Boolean),
  maxBytes: Schema.optionalKey(ReadBytes)
})
export type DiffRequest = typeof DiffRequest.Type

export const DiffResult = Schema.Struct({
  against: Schema.Literals(["head", "base"]),
  from: Schema.String,
  to: Schema.String,
  description: Schema.String,
  diff: Schema.String,
  truncated: Schema.Boolean,
  /** `base`: the files the PR changes (within `paths`), for a list to pick a file's diff from. */
  files: Schema.optionalKey(Schema.Array(ChangedFile))
})
export type DiffResult = typeof DiffResult.Type

/** `base`: the file at the merge-base with the PR's base branch; `head`: at the PR's head commit. */
export const PullRequestSide = Schema.Literals(["base", "head"])
export type PullRequestSide = typeof PullRequestSide.Type

export const PullRequestFileQuery = {
  side: PullRequestSide,
  path: WorkspacePathParam
}

/** A file of the PR's own commits, read from prbox's mirror (never the workspace): one side of a diff view. */
export const PullRequestFile = Schema.Struct({
  path: Schema.String,
  side: PullRequestSide,
  commit: Schema.String,
  /** The commit has no file there (added on the head, deleted from the base). */
  present: Schema.Boolean,
  /** The file has NUL bytes: `content` is empty. */
  binary: Schema.Boolean,
  content: Schema.String
})
export type PullRequestFile = typeof PullRequestFile.Type

/** A background job: what exec takes but the output bound (a job keeps its last JOB_OUTPUT_KEPT bytes). */
export const JobRequest = ExecRequest.mapFields(({ maxOutputBytes: _bound, ...fields }) => fields)
export type JobRequest = typeof JobRequest.Type

export const JobStatus = Schema.Literals(["running", "exited", "timed-out", "killed", "lost"])

export const JobView = Schema.Struct({
  jobId: Schema.String,
  sandboxId: SandboxId,
  argv: Schema.Array(Schema.String),
  /** `lost`: the daemon restarted while it ran; `killed`: by request or because its sandbox stopped. */
  status: JobStatus,
  exitCode: Schema.NullOr(Schema.Int),
  startedAt: NonNegativeInt,
  endedAt: Schema.NullOr(NonNegativeInt),
  outputBytes: NonNegativeInt
})
export type JobView = typeof JobView.Type

export const JobList = Schema.Array(JobView)

export const JobReadQuery = {
  offset: Schema.optionalKey(NonNegativeInt),
  maxBytes: Schema.optionalKey(ReadBytes)
}

export const JobOutput = Schema.Struct({
  job: JobView,
  /** Where `output` starts: the offset asked for, or later when those bytes are no longer kept. */
  offset: NonNegativeInt,
  output: Schema.String,
  nextOffset: NonNegativeInt,
  /** More output is already there past `nextOffset`. */
  more: Schema.Boolean
})
export type JobOutput = typeof JobOutput.Type
