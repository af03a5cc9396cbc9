import { Result, Schema } from "effect"

/** How a pull request changed a file, as `git diff --name-status` tells it. */
export const ChangeKind = Schema.Literals(["added", "modified", "deleted", "renamed", "copied", "type-changed"])
export type ChangeKind = typeof ChangeKind.Type

/** A file the pull request changes, its path relative to the repository's root. */
export const ChangedFile = Schema.Struct({
  path: Schema.String,
  change: ChangeKind,
  /** Renamed or copied: the path it came from. */
  previousPath: Schema.optionalKey(Schema.String)
})
export type ChangedFile = typeof ChangedFile.Type

const kinds: Readonly<Record<string, ChangeKind>> = {
  A: "added",
  M: "modified",
  D: "deleted",
  R: "renamed",
  C: "copied",
  T: "type-changed"
}

/**
 * `git diff --name-status -z`'s output: `<status>\0<path>\0` per file, and
 * `<R|C><score>\0<from>\0<to>\0` for a rename or copy. A status it does not
 * know (unmerged, unknown) or an entry cut short fails: the list would lie.
 */
export const parseNameStatus = (output: string): Result.Result<ReadonlyArray<ChangedFile>, string> => {
  const fields = output.split("\0")
  if (fields.at(-1) === "") fields.pop()
  const files: Array<ChangedFile> = []
  for (let at = 0; at < fields.length; ) {
    const status = fields[at] ?? ""
    const change = kinds[status.charAt(0)]
    if (change === undefined) return Result.fail(`unknown change status ${JSON.stringify(status)}`)
    const paired = change === "renamed" || change === "copied"
    const first = fields[at + 1]
    const second = paired ? fields[at + 2] : first
    if (first === undefined || second === undefined || first === "" || second === "") {
      return Result.fail("an entry is cut short")
    }
    files.push(paired ? { path: second, change, previousPath: first } : { path: first, change })
    at += paired ? 3 : 2
  }
  return Result.succeed(files)
}
