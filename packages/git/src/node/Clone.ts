import * as NodePath from "node:path"
import { Effect, FileSystem } from "effect"
import { classifyMirrorFailure } from "../Classify.ts"
import { withOriginUrl } from "../ConfigFile.ts"
import { GitCommandFailed, UnsafeArgument } from "../Errors.ts"
import { Git, type GitUser } from "../Git.ts"
import { commitPattern } from "../GitFiles.ts"
import { hasUrlCredentials, redactCredentials, stderrTail } from "../Redact.ts"
import { isSafeBranchName } from "../RefName.ts"
import type { CloneCheckout, CreatedWorkspace, CreateWorkspaceOptions } from "../Workspaces.ts"
import { handOverClone } from "./HandOver.ts"
import { fsStep } from "./MirrorFiles.ts"
import { editOriginUrl, noProgress } from "./Mirrors.ts"

type WithMirrorLock = (mirrorPath: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** Makes workspaces: self-contained clones of a mirror, checked out at a pull request's head. */
export const workspaceClones = Effect.fnUntraced(function* (localTimeoutMs: number, withMirrorLock: WithMirrorLock) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem
  /** git with `folder` as its working folder, as `asUser` when given; a non-zero exit fails. */
  const inFolder = (folder: string) => (args: ReadonlyArray<string>, asUser?: GitUser) =>
    git.run(args, { cwd: folder, timeoutMs: localTimeoutMs, ...(asUser === undefined ? {} : { asUser }) }).pipe(
      Effect.flatMap((output) =>
        output.exitCode === 0
          ? Effect.succeed(output)
          : Effect.fail(
              new GitCommandFailed({
                operation: `git ${args[0]}`,
                detail: stderrTail(output.stderr),
                exitCode: output.exitCode
              })
            )
      )
    )
  const checkoutArgs = (branchName: string, commit: string) => ["checkout", "--quiet", "-b", branchName, commit, "--"]
  const createWorkspace = Effect.fn("Workspaces.createWorkspace")(function* (options: CreateWorkspaceOptions) {
    const { branchName, commit, destination, mirrorPath, originUrl } = options
    const progress = options.onProgress ?? noProgress
    const refuse = (detail: string) => new UnsafeArgument({ operation: "createWorkspace", detail })
    if (hasUrlCredentials(originUrl)) {
      return yield* refuse(`the origin URL ${redactCredentials(originUrl)} carries credentials`)
    }
    if (originUrl.startsWith("-")) return yield* refuse("the origin URL cannot start with -")
    if (!isSafeBranchName(branchName)) return yield* refuse(`${JSON.stringify(branchName)} is not a valid branch name`)
    if (!commitPattern.test(commit)) return yield* refuse("the commit must be a full hexadecimal object id")
    if (!NodePath.isAbsolute(destination) || !NodePath.isAbsolute(mirrorPath)) {
      return yield* refuse("the destination and the mirror must be absolute paths")
    }
    const parent = NodePath.dirname(destination)
    yield* fsStep("create the workspace's parent directory", fs.makeDirectory(parent, { recursive: true }))
    const existed = yield* fsStep("inspect the destination", fs.exists(destination))
    const inWorkspace = inFolder(destination)
    const build = Effect.gen(function* () {
      yield* progress(`cloning ${mirrorPath} into ${destination}`)
      // The mirror's objects are copied, never hardlinked: a sandbox can write
      // its own files (chmod, then rewrite), and an inode it shares with the
      // mirror would let it change what every other sandbox of the repository
      // checks out. The lock keeps a fetch (and its auto-gc) from repacking
      // them mid-clone.
      const cloned = yield* git
        .run(
          [
            "clone",
            "--no-checkout",
            "--local",
            "--no-hardlinks",
            "--no-tags",
            "--quiet",
            "--",
            mirrorPath,
            destination
          ],
          {
            cwd: parent,
            timeoutMs: localTimeoutMs
          }
        )
        .pipe(withMirrorLock(mirrorPath))
      if (cloned.exitCode !== 0) {
        return yield* classifyMirrorFailure("git clone", cloned, mirrorPath)
      }
      // The clone's origin is the mirror; the workspace's is the real remote.
      yield* editOriginUrl(fs, NodePath.join(destination, ".git"), originUrl, withOriginUrl, (args) =>
        inWorkspace(args)
      )
      if (options.owner !== undefined) yield* handOverClone(fs, destination, options.owner)
      const created: CreatedWorkspace = { path: destination, branch: branchName, commit }
      if (options.checkout === false) return created
      yield* progress(`checking out ${commit} as ${branchName}`)
      yield* inWorkspace(checkoutArgs(branchName, commit), options.owner)
      return created
    })
    return yield* build.pipe(
      Effect.onError(() => (existed ? Effect.void : Effect.ignore(fs.remove(destination, { recursive: true }))))
    )
  })

  /**
   * Checks out a clone `createWorkspace` made without its files (`checkout:
   * false`), here: only while no container has run on it.
   */
  const checkoutClone = Effect.fn("Workspaces.checkoutClone")(function* (options: CloneCheckout) {
    const { branchName, commit, destination } = options
    const refuse = (detail: string) => new UnsafeArgument({ operation: "checkoutClone", detail })
    if (!isSafeBranchName(branchName)) return yield* refuse(`${JSON.stringify(branchName)} is not a valid branch name`)
    if (!commitPattern.test(commit)) return yield* refuse("the commit must be a full hexadecimal object id")
    if (!NodePath.isAbsolute(destination)) return yield* refuse("the workspace must be an absolute path")
    yield* inFolder(destination)(checkoutArgs(branchName, commit), options.owner)
  })

  return { createWorkspace, checkoutClone }
})
