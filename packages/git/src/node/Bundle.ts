import * as NodePath from "node:path"
import { Effect, FileSystem } from "effect"
import { UnsafeArgument } from "../Errors.ts"
import { Git } from "../Git.ts"
import { checkCommit, failure, type WithMirrorLock } from "../WorkspaceUpdate.ts"
import { fsStep } from "./MirrorFiles.ts"

/** The one ref a bundle carries (a bundle names refs, never bare commits). */
const BUNDLE_REF = "refs/heads/prbox-bundle"

/**
 * A git bundle of one commit of a mirror, for a repository that is not on
 * this machine (a workspace in a remote engine's volume): what `commit`
 * needs minus the history of those of `have` the mirror knows (the
 * receiver's commits; the rest are left out of the exclusion, never
 * fail it). Only objects cross: no ref, remote or credential of the mirror.
 */
export const commitBundles = Effect.fnUntraced(function* (localTimeoutMs: number, withMirrorLock: WithMirrorLock) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem

  return Effect.fn("Workspaces.bundleCommit")(function* (
    mirrorPath: string,
    commit: string,
    have: ReadonlyArray<string>
  ) {
    if (!NodePath.isAbsolute(mirrorPath)) {
      return yield* new UnsafeArgument({ operation: "bundleCommit", detail: "the mirror must be an absolute path" })
    }
    yield* checkCommit("bundleCommit", commit)
    yield* Effect.forEach(have, (known) => checkCommit("bundleCommit", known), { discard: true })
    const bundle = Effect.gen(function* () {
      const dir = yield* fsStep("make a temporary folder", fs.makeTempDirectoryScoped({ prefix: "prbox-bundle-" }))
      // A throwaway repository borrowing the mirror's objects holds the ref the
      // bundle needs: the mirror's own refs are left alone.
      const repository = NodePath.join(dir, "repository.git")
      const run = (args: ReadonlyArray<string>) =>
        git.run([`--git-dir=${repository}`, ...args], { cwd: dir, timeoutMs: localTimeoutMs })
      const succeed = (args: ReadonlyArray<string>) =>
        Effect.flatMap(run(args), (output) =>
          output.exitCode === 0 ? Effect.succeed(output) : Effect.fail(failure(args, output))
        )
      yield* succeed(["init", "--bare", "--quiet", repository])
      yield* fsStep(
        "borrow the mirror's objects",
        fs.writeFileString(NodePath.join(repository, "objects", "info", "alternates"), `${mirrorPath}/objects\n`)
      )
      yield* succeed(["update-ref", BUNDLE_REF, commit])
      const known = yield* Effect.filter(have, (candidate) =>
        Effect.map(run(["cat-file", "-e", `${candidate}^{commit}`]), (output) => output.exitCode === 0)
      )
      const file = NodePath.join(dir, "commit.bundle")
      yield* succeed(["bundle", "create", "--quiet", file, BUNDLE_REF, ...known.map((excluded) => `^${excluded}`)])
      return yield* fsStep("read the bundle", fs.readFile(file))
    })
    // The lock keeps a fetch into the mirror (and its auto-gc) from repacking under this read.
    return yield* Effect.scoped(bundle).pipe(withMirrorLock(mirrorPath))
  })
})
