import * as NodePath from "node:path"
import { statePaths } from "@prbox/domain"
import { Effect, FileSystem } from "effect"
import { parseBundleHeader } from "../BundleHeader.ts"
import { PushRejected, UnsafeArgument } from "../Errors.ts"
import { Git, type GitOutput } from "../Git.ts"
import { parsePushLog, pushOutcome } from "../PushParse.ts"
import { hasUrlCredentials, redactCredentials, stderrTail } from "../Redact.ts"
import { isSafeBranchName } from "../RefName.ts"
import type { PushCommit, PushReview, ReviewPushOptions } from "../Workspaces.ts"
import { checkCommit, failure, type WithMirrorLock } from "../WorkspaceUpdate.ts"
import { fsStep } from "./MirrorFiles.ts"

/** Every way git checks received objects, on for the one step that receives them. */
const FSCK = ["-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true", "-c", "receive.fsckObjects=true"]

export interface PushReviewTimeouts {
  readonly local: number
  readonly fetch: number
}

/**
 * A sandbox's commits, come out of its container as a bundle, checked on
 * this machine in a temporary repository under prbox's state that borrows
 * the mirror's objects (read only: nothing is written into the mirror):
 * its pack indexed with every object checked (`index-pack --strict`), one
 * ref, a commit, a fast-forward of the PR's head. Then, when asked, pushed
 * from there with the user's own credentials (the environment fetches
 * use), leased on the PR's head. The temporary repository is removed
 * whatever happens.
 */
export const pushReviews = Effect.fnUntraced(function* (
  stateDir: string,
  timeouts: PushReviewTimeouts,
  withMirrorLock: WithMirrorLock
) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem
  const pushesDir = statePaths(NodePath.resolve(stateDir)).pushes

  return Effect.fn("Workspaces.reviewPush")(function* (options: ReviewPushOptions) {
    const { mirrorPath, bundle, head, push } = options
    if (!NodePath.isAbsolute(mirrorPath)) {
      return yield* new UnsafeArgument({ operation: "reviewPush", detail: "the mirror must be an absolute path" })
    }
    yield* checkCommit("reviewPush", head)
    if (push !== undefined) {
      if (!isSafeBranchName(push.branch)) {
        return yield* new UnsafeArgument({ operation: "push", detail: "the branch name is not one git takes" })
      }
      if (hasUrlCredentials(push.url)) {
        return yield* new UnsafeArgument({
          operation: "push",
          detail: `the remote ${redactCredentials(push.url)} carries credentials; use a credential helper or ssh-agent`
        })
      }
    }
    const header = parseBundleHeader(bundle)
    if (typeof header === "string") return yield* new PushRejected({ kind: "bundle", detail: header })
    const [ref, ...more] = header.refs
    if (ref === undefined || more.length > 0) {
      return yield* new PushRejected({
        kind: "bundle",
        detail: `the sandbox's bundle carries ${header.refs.length} refs; a push takes exactly one`
      })
    }
    const tip = ref.commit

    const review = Effect.gen(function* () {
      yield* fsStep("make prbox's push folder", fs.makeDirectory(pushesDir, { recursive: true, mode: 0o700 }))
      const dir = yield* fsStep(
        "make a temporary repository",
        fs.makeTempDirectoryScoped({ directory: pushesDir, prefix: "push-" })
      )
      const repository = NodePath.join(dir, "repository.git")
      const run = (
        args: ReadonlyArray<string>,
        extra: { readonly stdin?: Uint8Array; readonly timeoutMs?: number } = {}
      ) =>
        git.run([`--git-dir=${repository}`, "-c", "gc.auto=0", "-c", "core.hooksPath=/dev/null", ...args], {
          cwd: dir,
          timeoutMs: extra.timeoutMs ?? timeouts.local,
          ...(extra.stdin === undefined ? {} : { stdin: extra.stdin })
        })
      const succeed = (args: ReadonlyArray<string>) =>
        Effect.flatMap(run(args), (output) =>
          output.exitCode === 0 ? Effect.succeed(output) : Effect.fail(failure(args, output))
        )
      const holds = (args: ReadonlyArray<string>) => Effect.map(run(args), (output: GitOutput) => output.exitCode === 0)
      yield* succeed(["init", "--bare", "--quiet", repository])
      yield* fsStep(
        "borrow the mirror's objects",
        fs.writeFileString(NodePath.join(repository, "objects", "info", "alternates"), `${mirrorPath}/objects\n`)
      )
      // The bundle's pack, every object checked; its bases come from the mirror (a thin pack).
      const indexed = yield* run([...FSCK, "index-pack", "--strict", "--fix-thin", "--stdin"], {
        stdin: bundle.subarray(header.packStart)
      })
      if (indexed.exitCode !== 0) {
        return yield* new PushRejected({
          kind: "malformed",
          detail: `git refused the sandbox's objects: ${stderrTail(indexed.stderr, 3, 300)}`
        })
      }
      const type = yield* run(["cat-file", "-t", tip])
      if (type.exitCode !== 0 || type.stdout.trim() !== "commit") {
        return yield* new PushRejected({ kind: "bundle", detail: "the sandbox's bundle does not name a commit" })
      }
      if (tip === head) {
        return yield* new PushRejected({
          kind: "no-new-commits",
          detail: "the sandbox has no commits on the PR's head"
        })
      }
      const ancestors = [head, ...header.prerequisites]
      for (const ancestor of ancestors) {
        if (!(yield* holds(["merge-base", "--is-ancestor", ancestor, ancestor === head ? tip : head]))) {
          return yield* new PushRejected({
            kind: "not-fast-forward",
            detail: `the sandbox's commits are not a fast-forward of the PR's head ${head.slice(0, 7)}`
          })
        }
      }
      const log = yield* succeed([
        "log",
        "--no-renames",
        "--name-only",
        "--format=%x1e%H%x1f%an <%ae>%x1f%s",
        `${head}..${tip}`,
        "--"
      ])
      const commits: ReadonlyArray<PushCommit> = parsePushLog(log.stdout)
      if (push === undefined) return { tip, commits, pushed: false } satisfies PushReview
      const branchRef = `refs/heads/${push.branch}`
      const pushed = yield* run(
        [
          "push",
          "--porcelain",
          "--no-verify",
          `--force-with-lease=${branchRef}:${head}`,
          "--",
          push.url,
          `${tip}:${branchRef}`
        ],
        { timeoutMs: timeouts.fetch }
      )
      const outcome = pushOutcome(pushed)
      if (outcome !== "pushed") return yield* outcome
      return { tip, commits, pushed: true } satisfies PushReview
    })
    // The lock keeps a fetch into the mirror (and its auto-gc) from repacking under the borrowed objects.
    return yield* Effect.scoped(review).pipe(withMirrorLock(mirrorPath))
  })
})
