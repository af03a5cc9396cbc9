/**
 * A mirror's own files, read and written in-process where a git process
 * would cost more than the open's work around it (see GitFiles.ts).
 */
import * as NodePath from "node:path"
import { Effect, type FileSystem } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { FileSystemFailed, GitCommandFailed } from "../Errors.ts"
import { looseObjectType, movePackedBranches } from "../GitFiles.ts"
import { redactCredentials } from "../Redact.ts"
import { isSafeRefName } from "../RefName.ts"

/** Where a mirror keeps the base branches it holds: `refs/prbox/base/<branch>`. */
export const BASE_PREFIX = "refs/prbox/base/"
/** The remote's default branch, as last asked: a symbolic ref to its `refs/prbox/base/<branch>`. */
export const DEFAULT_BASE = `${BASE_PREFIX}HEAD`

/** A loose object bigger than this is not read in-process (a commit or a tag never is). */
const LOOSE_OBJECT_LIMIT = 1 << 20

/** A file-system step of a fetch or clone, failing with what it was doing. */
export const fsStep = <A, R>(operation: string, effect: Effect.Effect<A, PlatformError, R>) =>
  Effect.mapError(effect, (error) => new FileSystemFailed({ operation, detail: redactCredentials(error.message) }))

/**
 * A fresh bare clone's branches moved to `refs/prbox/base/` (a workspace
 * cloned from the mirror must get no `origin/<branch>`), and the remote's
 * default branch remembered as `refs/prbox/base/HEAD`, as the base diff would
 * after asking the remote. The clone wrote its branches in `packed-refs`; a
 * loose one would go with the renamed directory.
 */
export const moveClonedBranches = Effect.fnUntraced(function* (fs: FileSystem.FileSystem, gitDir: string) {
  const refs = NodePath.join(gitDir, "refs")
  const base = NodePath.join(gitDir, BASE_PREFIX)
  yield* fsStep("create the mirror's base refs", fs.makeDirectory(NodePath.dirname(base), { recursive: true }))
  yield* fsStep("move the clone's branches", fs.rename(NodePath.join(refs, "heads"), base))
  yield* fsStep("create the mirror's branches directory", fs.makeDirectory(NodePath.join(refs, "heads")))
  const packedPath = NodePath.join(gitDir, "packed-refs")
  // An empty remote: nothing was cloned.
  if (!(yield* fsStep("inspect the clone's packed refs", fs.exists(packedPath)))) return
  const packed = yield* fsStep("read the clone's packed refs", fs.readFileString(packedPath))
  const moved = movePackedBranches(packed, BASE_PREFIX)
  if (moved === undefined) {
    return yield* new GitCommandFailed({
      operation: "git clone",
      detail: "the new mirror's packed-refs is not in the form git writes",
      exitCode: 0
    })
  }
  yield* fsStep("write the mirror's packed refs", fs.writeFileString(packedPath, moved.packedRefs))
  const head = yield* fsStep("read the clone's HEAD", fs.readFileString(NodePath.join(gitDir, "HEAD")))
  const branch = /^ref: refs\/heads\/(\S+)\n$/.exec(head)?.[1]
  if (
    branch === undefined ||
    !moved.branches.includes(branch) ||
    !isSafeRefName(`${BASE_PREFIX}${branch}`) ||
    // A branch named HEAD would be the symbolic ref itself.
    branch === "HEAD" ||
    branch.startsWith("HEAD/")
  ) {
    return
  }
  yield* fsStep(
    "remember the default branch",
    fs.writeFileString(NodePath.join(gitDir, DEFAULT_BASE), `ref: ${BASE_PREFIX}${branch}\n`)
  )
})

/** The type of `oid` when it is a loose object in `gitDir`; undefined otherwise (packed, too big, unreadable). */
export const looseObjectTypeOf = (fs: FileSystem.FileSystem, gitDir: string, oid: string) =>
  Effect.gen(function* () {
    const file = NodePath.join(gitDir, "objects", oid.slice(0, 2), oid.slice(2))
    const info = yield* fs.stat(file)
    return info.type === "File" && Number(info.size) <= LOOSE_OBJECT_LIMIT
      ? looseObjectType(yield* fs.readFile(file))
      : undefined
  }).pipe(Effect.orElseSucceed(() => undefined))
