import * as NodePath from "node:path"
import { Effect, FileSystem } from "effect"
import { UnsafeArgument } from "../Errors.ts"
import { Git } from "../Git.ts"
import { checkCommit, failure, type WithMirrorLock } from "../WorkspaceUpdate.ts"
import { fsStep } from "./MirrorFiles.ts"

/** The one ref a bundle carries (a bundle names refs, never bare commits). */
const BUNDLE_REF = "refs/heads/prbox-bundle"

/** git's refusal of a bundle with nothing in it (git runs with LC_ALL=C). */
const EMPTY = /empty bundle/i

/** A bare repository's config for the object format `commit`'s id is written in. */
const configFor = (commit: string) =>
  commit.length === 64
    ? "[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = sha256\n"
    : "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"

/**
 * A git bundle of one commit of a mirror, for a repository that is not on
 * this machine (a workspace in a remote engine's volume): what `commit`
 * needs minus the history of those of `have` the mirror knows (the
 * receiver's commits; the rest are left out of the exclusion, never
 * fail it); empty when the receiver holds all of it. Only objects cross:
 * no ref, remote or credential of the mirror.
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
      // bundle needs (the mirror's own refs are left alone), written by hand:
      // no `git init` and `git update-ref` to wait for on an open's path.
      const repository = NodePath.join(dir, "repository.git")
      const write = (path: string, text: string) => fs.writeFileString(NodePath.join(repository, path), text)
      yield* fsStep(
        "make the bundle's repository",
        Effect.all(
          [
            fs.makeDirectory(NodePath.join(repository, "refs", "heads"), { recursive: true }),
            fs.makeDirectory(NodePath.join(repository, "objects", "info"), { recursive: true })
          ],
          { discard: true }
        ).pipe(
          Effect.andThen(
            Effect.all(
              [
                write("HEAD", `ref: ${BUNDLE_REF}\n`),
                write("config", configFor(commit)),
                write("objects/info/alternates", `${mirrorPath}/objects\n`),
                write(BUNDLE_REF, `${commit}\n`)
              ],
              { discard: true }
            )
          )
        )
      )
      const run = (args: ReadonlyArray<string>) =>
        git.run([`--git-dir=${repository}`, ...args], { cwd: dir, timeoutMs: localTimeoutMs })
      const file = NodePath.join(dir, "commit.bundle")
      const create = (excluded: ReadonlyArray<string>) =>
        run(["bundle", "create", "--quiet", file, BUNDLE_REF, ...excluded.map((known) => `^${known}`)])
      // Every one of `have` the mirror knows is the usual case: one git run. Else each is checked.
      let made = yield* create(have)
      if (made.exitCode !== 0 && !EMPTY.test(made.stderr) && have.length > 0) {
        const known = yield* Effect.filter(have, (candidate) =>
          Effect.map(run(["cat-file", "-e", `${candidate}^{commit}`]), (output) => output.exitCode === 0)
        )
        made = yield* create(known)
      }
      // The receiver holds all of it already.
      if (made.exitCode !== 0 && EMPTY.test(made.stderr)) return new Uint8Array()
      if (made.exitCode !== 0) return yield* failure(["bundle"], made)
      return yield* fsStep("read the bundle", fs.readFile(file))
    })
    // The lock keeps a fetch into the mirror (and its auto-gc) from repacking under this read.
    return yield* Effect.scoped(bundle).pipe(withMirrorLock(mirrorPath))
  })
})
