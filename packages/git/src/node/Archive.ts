import * as NodePath from "node:path"
import { Effect, FileSystem } from "effect"
import { UnsafeArgument } from "../Errors.ts"
import { Git } from "../Git.ts"
import { checkCommit, failure, type WithMirrorLock } from "../WorkspaceUpdate.ts"
import { fsStep } from "./MirrorFiles.ts"

/**
 * The bytes of a commit's files, by `git ls-tree -r -l -z`'s sizes (a
 * submodule's or a link's entry counts as nothing, `-` or its target's length).
 */
export const treeBytes = (listing: string): number =>
  listing
    .split("\0")
    .filter((entry) => entry.length > 0)
    .reduce((total, entry) => {
      const size = Number.parseInt(entry.split(/\s+/)[3] ?? "", 10)
      return Number.isNaN(size) ? total : total + size
    }, 0)

/**
 * A commit's files as a tar archive (`git archive`: files and symbolic links
 * as entries, no `.git`), from prbox's own mirror, never a checkout: what a
 * container unpacks as data. A commit whose files pass `maxBytes` is refused
 * before the archive is made.
 */
export const commitArchives = Effect.fnUntraced(function* (localTimeoutMs: number, withMirrorLock: WithMirrorLock) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem

  return Effect.fn("Workspaces.archiveCommit")(function* (mirrorPath: string, commit: string, maxBytes: number) {
    const operation = "archiveCommit"
    if (!NodePath.isAbsolute(mirrorPath)) {
      return yield* new UnsafeArgument({ operation, detail: "the mirror must be an absolute path" })
    }
    yield* checkCommit(operation, commit)
    const archive = Effect.gen(function* () {
      const dir = yield* fsStep("make a temporary folder", fs.makeTempDirectoryScoped({ prefix: "prbox-archive-" }))
      const succeed = (args: ReadonlyArray<string>) =>
        Effect.flatMap(
          git.run([`--git-dir=${mirrorPath}`, ...args], { cwd: dir, timeoutMs: localTimeoutMs }),
          (output) => (output.exitCode === 0 ? Effect.succeed(output) : Effect.fail(failure(args, output)))
        )
      const listing = yield* succeed(["ls-tree", "-r", "-l", "-z", "--end-of-options", commit])
      const size = treeBytes(listing.stdout)
      if (size > maxBytes) {
        const mib = (bytes: number, digits: number) => `${(bytes / (1024 * 1024)).toFixed(digits)} MiB`
        const detail = `its files hold ${mib(size, 1)}, over ${mib(maxBytes, 0)}`
        return yield* new UnsafeArgument({ operation, detail })
      }
      const file = NodePath.join(dir, "files.tar")
      yield* succeed(["archive", "--format=tar", `--output=${file}`, "--end-of-options", commit])
      return yield* fsStep("read the archive", fs.readFile(file))
    })
    // The lock keeps a fetch into the mirror (and its auto-gc) from repacking under this read.
    return yield* Effect.scoped(archive).pipe(withMirrorLock(mirrorPath))
  })
})
