import * as NodePath from "node:path"
import { Effect, type FileSystem, Option } from "effect"
import type { GitUser } from "./Git.ts"
import { fsStep } from "./MirrorFiles.ts"

/**
 * Gives `user` what a root daemon's `git clone --local --no-checkout` wrote
 * at `path` (a `.git` of ~100 entries), so that the checkout can run as that
 * user and write the working tree as theirs, with no walk over it afterwards.
 * Files with more than one link are left to root: they are the objects
 * shared with the mirror (handing them over would let one sandbox rewrite
 * every other's history). Symbolic links are left too: chown would follow
 * them. The folder itself goes last: its owner says the hand-over finished.
 */
export const handOverClone = (fs: FileSystem.FileSystem, path: string, user: GitUser) =>
  Effect.gen(function* () {
    const entries = yield* fsStep("list the new clone", fs.readDirectory(path, { recursive: true }))
    const handOver = (target: string) => fsStep("hand the new clone over", fs.chown(target, user.uid, user.gid))
    yield* Effect.forEach(
      entries,
      (entry) =>
        Effect.gen(function* () {
          const target = NodePath.join(path, entry)
          const info = yield* fsStep("inspect the new clone", fs.lstat(target))
          const shared = info.type === "File" && Option.getOrElse(info.nlink, () => 1n) > 1n
          if (info.type === "Directory" || (info.type === "File" && !shared)) yield* handOver(target)
        }),
      { concurrency: 16, discard: true }
    )
    yield* handOver(path)
  })
