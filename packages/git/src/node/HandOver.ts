import * as NodePath from "node:path"
import { Effect, type FileSystem, Option } from "effect"
import type { FileSystemFailed } from "../Errors.ts"
import type { GitUser } from "../Git.ts"
import { fsStep } from "./MirrorFiles.ts"

/**
 * Gives `user` what a root daemon's `git clone --local --no-checkout` wrote
 * at `path` (its `.git`), so that the checkout can run as that user and
 * write the working tree as theirs, with no walk over it afterwards.
 * Under `.git/objects` only the folders are handed over (new objects go
 * there): its files are copies of the mirror's, read-only, which git never
 * rewrites, so they are not even listed. Elsewhere a file with more than
 * one link is left to root (it is shared with something else), and
 * symbolic links are left (chown would follow them). The folder itself goes last: its owner says the hand-over finished.
 */
export const handOverClone = (fs: FileSystem.FileSystem, path: string, user: GitUser) => {
  const handOver = (target: string) => fsStep("hand the new clone over", fs.chown(target, user.uid, user.gid))
  const objects = NodePath.join(path, ".git", "objects")
  const walk = (dir: string): Effect.Effect<void, FileSystemFailed> =>
    Effect.flatMap(fsStep("list the new clone", fs.readDirectoryEntries(dir)), (entries) =>
      Effect.forEach(
        entries,
        (entry) => {
          const target = NodePath.join(dir, entry.name)
          const inObjects = dir === objects || dir.startsWith(`${objects}${NodePath.sep}`)
          if (entry.type === "Directory")
            return Effect.andThen(handOver(target), inObjects ? Effect.void : walk(target))
          if (entry.type !== "File" || inObjects) return Effect.void
          return Effect.flatMap(fsStep("inspect the new clone", fs.lstat(target)), (info) =>
            Option.getOrElse(info.nlink, () => 1n) > 1n ? Effect.void : handOver(target)
          )
        },
        { concurrency: 16, discard: true }
      )
    )
  return Effect.andThen(walk(path), handOver(path))
}
