import { createHash, randomBytes } from "node:crypto"
import * as NodePath from "node:path"
import { PullRequestNumber } from "@prbox/domain"
import { Effect, FileSystem, Ref, Semaphore } from "effect"
import { classifyFetchFailure, classifyMirrorFailure } from "../Classify.ts"
import { hasOriginUrl, withOnlyOriginUrl } from "../ConfigFile.ts"
import { MirrorCorrupt, UnsafeArgument } from "../Errors.ts"
import { Git, type GitOutput } from "../Git.ts"
import { commitPattern, fetchHeadEntry } from "../GitFiles.ts"
import type { PullRequestRef } from "../PullRequestRef.ts"
import { hasUrlCredentials, redactCredentials, stderrTail } from "../Redact.ts"
import type { RepositoryRef } from "../RepositoryRef.ts"
import type { FetchedPullRequest, MirrorKey, ProgressOptions } from "../Workspaces.ts"
import { fsStep, looseObjectTypeOf, moveClonedBranches } from "./MirrorFiles.ts"

export const noProgress = (): Effect.Effect<void> => Effect.void

/**
 * Sets `remote.origin.url` of the repository whose git directory is `gitDir`
 * by editing its config file (`edit`), or through `git` (given the `config`
 * arguments) when the file is not the plain one git writes.
 */
export const editOriginUrl = <E, R>(
  fs: FileSystem.FileSystem,
  gitDir: string,
  url: string,
  edit: (config: string, url: string) => string | undefined,
  git: (args: ReadonlyArray<string>) => Effect.Effect<unknown, E, R>
) =>
  Effect.gen(function* () {
    const file = NodePath.join(gitDir, "config")
    const edited = edit(yield* fsStep("read the repository's config", fs.readFileString(file)), url)
    if (edited !== undefined) return yield* fsStep("write the repository's config", fs.writeFileString(file, edited))
    yield* git(["config", "--end-of-options", "remote.origin.url", url])
  })

const sanitise = (text: string): string => text.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\./, "_")

export interface MirrorsOptions {
  readonly mirrorsDir: string
  readonly fetchTimeoutMs: number
  readonly localTimeoutMs: number
}

/**
 * One bare mirror per repository under `mirrorsDir`, fetched one pull request
 * ref at a time. A mirror's lock serialises its fetches and the clones made
 * from it (`withMirrorLock`).
 */
export const workspaceMirrors = Effect.fnUntraced(function* (options: MirrorsOptions) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem
  const { mirrorsDir, fetchTimeoutMs, localTimeoutMs } = options
  const locks = yield* Ref.make(new Map<string, Semaphore.Semaphore>())

  const withMirrorLock =
    (mirrorPath: string) =>
    <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Ref.modify(locks, (map): [Semaphore.Semaphore, Map<string, Semaphore.Semaphore>] => {
        const existing = map.get(mirrorPath)
        if (existing !== undefined) return [existing, map]
        const created = Semaphore.makeUnsafe(1)
        return [created, new Map(map).set(mirrorPath, created)]
      }).pipe(Effect.flatMap((lock) => lock.withPermit(effect)))

  // The readable part names the mirror; the hash keeps names that sanitise
  // alike apart. A CodeCommit profile may be another account: its own mirror.
  const mirrorPathOf = (ref: MirrorKey): string => {
    const key = [ref.host, ref.repository, ref.profile ?? ""].join("\0")
    const hash = createHash("sha256").update(key).digest("hex").slice(0, 12)
    const name = sanitise(ref.repository.replace(/^\/+/, "")).slice(-80)
    return NodePath.join(mirrorsDir, sanitise(ref.host), `${name}-${hash}.git`)
  }

  // `--git-dir` keeps git from walking up to an enclosing repository when the
  // mirror is broken.
  const inMirror = (mirrorPath: string, args: ReadonlyArray<string>) =>
    git.run([`--git-dir=${mirrorPath}`, ...args], { cwd: NodePath.dirname(mirrorPath), timeoutMs: localTimeoutMs })

  const expectSuccess = (operation: string, mirrorPath: string) => (output: GitOutput) =>
    output.exitCode === 0 ? Effect.succeed(output) : Effect.fail(classifyMirrorFailure(operation, output, mirrorPath))

  const createMirror = Effect.fnUntraced(function* (
    mirrorPath: string,
    ref: PullRequestRef,
    progress: (line: string) => Effect.Effect<void>
  ) {
    const parent = NodePath.dirname(mirrorPath)
    yield* fsStep("create the mirrors directory", fs.makeDirectory(parent, { recursive: true, mode: 0o700 }))
    // Leftovers of a creation that crashed midway.
    const base = `${NodePath.basename(mirrorPath)}.tmp-`
    const leftovers = yield* fsStep("list the mirrors directory", fs.readDirectory(parent))
    yield* Effect.forEach(
      leftovers.filter((entry) => entry.startsWith(base)),
      (entry) => fsStep("remove a partial mirror", fs.remove(NodePath.join(parent, entry), { recursive: true })),
      { discard: true }
    )
    // Built aside and renamed into place, so a crash never leaves a half-made mirror.
    const temporary = `${mirrorPath}.tmp-${randomBytes(6).toString("hex")}`
    const build = Effect.gen(function* () {
      // A clone checks its one pack as a whole; a fetch into an empty
      // repository walks every object it received. The remote's default
      // branch comes along, so the pull request's fetch is incremental.
      const cloned = yield* git.run(
        [
          "clone",
          "--bare",
          "--no-local",
          "--no-tags",
          "--single-branch",
          "--origin=origin",
          "--progress",
          "--",
          ref.remoteUrl,
          temporary
        ],
        {
          cwd: parent,
          timeoutMs: fetchTimeoutMs,
          onStderrLine: progress,
          // The refs are moved in-process: the files backend whatever the user's default.
          env: { GIT_DEFAULT_REF_FORMAT: "files" }
        }
      )
      if (cloned.exitCode !== 0) return yield* classifyFetchFailure("git clone", cloned, ref, mirrorPath)
      yield* moveClonedBranches(fs, temporary)
      // The clone wrote its own origin (an absolute path for a local remote, `tagOpt`): the URL alone, as given.
      yield* editOriginUrl(fs, temporary, ref.remoteUrl, withOnlyOriginUrl, (args) =>
        inMirror(temporary, args).pipe(Effect.flatMap(expectSuccess("git config", temporary)))
      )
      yield* fsStep("move the new mirror into place", fs.rename(temporary, mirrorPath))
    })
    yield* build.pipe(Effect.onError(() => Effect.ignore(fs.remove(temporary, { recursive: true }))))
  })

  /** Returns whether the mirror had to be created. */
  const ensureMirror = Effect.fnUntraced(function* (
    mirrorPath: string,
    ref: PullRequestRef,
    progress: (line: string) => Effect.Effect<void>
  ) {
    const { remoteUrl } = ref
    if (!(yield* fsStep("inspect the mirror", fs.exists(mirrorPath)))) {
      yield* progress(`creating mirror ${mirrorPath} from ${redactCredentials(remoteUrl)}`)
      yield* createMirror(mirrorPath, ref, progress)
      return true
    }
    // A mirror git cannot read fails its fetch as corrupt; its config is read here only for the URL.
    const config = yield* fs.readFileString(NodePath.join(mirrorPath, "config")).pipe(Effect.orElseSucceed(() => ""))
    // The same repository may be reached by another URL this time (https after ssh).
    if (!hasOriginUrl(config, remoteUrl)) {
      const set = yield* inMirror(mirrorPath, ["config", "--end-of-options", "remote.origin.url", remoteUrl])
      if (set.exitCode !== 0) {
        return yield* new MirrorCorrupt({
          operation: "git config",
          detail: stderrTail(set.stderr) || "its config cannot be written",
          mirrorPath
        })
      }
    }
    yield* progress(`reusing mirror ${mirrorPath}`)
    return false
  })

  /**
   * The commit the pull request's fetch just wrote to `localRef`, from its
   * FETCH_HEAD (the mirror's lock is held). git itself peels the object when it
   * is not a loose commit here: an annotated tag, or a packed object.
   */
  const fetchedCommit = Effect.fnUntraced(function* (mirrorPath: string, localRef: string) {
    const fetchHead = yield* fs
      .readFileString(NodePath.join(mirrorPath, "FETCH_HEAD"))
      .pipe(Effect.orElseSucceed(() => ""))
    const entry = fetchHeadEntry(fetchHead)
    if (entry === undefined) {
      return yield* new MirrorCorrupt({
        operation: "read FETCH_HEAD",
        detail: `FETCH_HEAD does not name the one object fetched for ${localRef}`,
        mirrorPath
      })
    }
    if (entry.forMerge && (yield* looseObjectTypeOf(fs, mirrorPath, entry.oid)) === "commit") return entry.oid
    const resolved = yield* inMirror(mirrorPath, ["rev-parse", "--verify", "--end-of-options", `${localRef}^{commit}`])
    const commit = resolved.stdout.trim()
    if (resolved.exitCode !== 0 || !commitPattern.test(commit)) {
      return yield* new MirrorCorrupt({
        operation: "git rev-parse",
        detail: stderrTail(resolved.stderr) || `cannot read ${localRef}`,
        mirrorPath
      })
    }
    return commit
  })

  const fetchInto = Effect.fnUntraced(function* (
    ref: PullRequestRef,
    mirrorPath: string,
    localRef: string,
    progress: (line: string) => Effect.Effect<void>
  ) {
    const mirrorCreated = yield* ensureMirror(mirrorPath, ref, progress)
    yield* progress(`fetching ${ref.headRef} from ${redactCredentials(ref.remoteUrl)}`)
    const fetched = yield* git.run(
      [
        `--git-dir=${mirrorPath}`,
        "fetch",
        // FETCH_HEAD is written: the commit is read from it.
        "--no-tags",
        "--progress",
        "--end-of-options",
        "origin",
        `+${ref.headRef}:${localRef}`
      ],
      { cwd: NodePath.dirname(mirrorPath), timeoutMs: fetchTimeoutMs, onStderrLine: progress }
    )
    if (fetched.exitCode !== 0) return yield* classifyFetchFailure("git fetch", fetched, ref, mirrorPath)
    const commit = yield* fetchedCommit(mirrorPath, localRef)
    const result: FetchedPullRequest = { mirrorPath, commit, fetchedRefs: [ref.headRef], mirrorCreated }
    return result
  })

  /** `ref`'s head into the mirror at `localRef`; a corrupt mirror is re-made once. */
  const fetchRef = (ref: PullRequestRef, localRef: string, options: ProgressOptions) =>
    Effect.gen(function* () {
      if (hasUrlCredentials(ref.remoteUrl)) {
        return yield* new UnsafeArgument({
          operation: "fetch",
          detail: `the remote ${redactCredentials(ref.remoteUrl)} carries credentials; use a credential helper or ssh-agent`
        })
      }
      const progress = options.onProgress ?? noProgress
      const mirrorPath = mirrorPathOf(ref)
      // A corrupt mirror is only a cache: re-create it once, then give up.
      return yield* fetchInto(ref, mirrorPath, localRef, progress).pipe(
        Effect.catchTag("MirrorCorrupt", (corrupt) =>
          progress(`mirror ${mirrorPath} is corrupt (${corrupt.detail}); re-creating it`).pipe(
            Effect.andThen(fsStep("remove the corrupt mirror", fs.remove(mirrorPath, { recursive: true }))),
            Effect.andThen(fetchInto(ref, mirrorPath, localRef, progress))
          )
        ),
        withMirrorLock(mirrorPath)
      )
    })

  const fetchPullRequest = Effect.fn("Workspaces.fetchPullRequest")(function* (
    ref: PullRequestRef,
    options: ProgressOptions = {}
  ) {
    return yield* fetchRef(ref, `refs/prbox/pr/${ref.pullRequest}`, options)
  })

  /** A repository's default branch (the remote's HEAD) into the mirror of `repository`, at `refs/prbox/head`. */
  const headInto = (repository: RepositoryRef, options: ProgressOptions) =>
    // The mirror machinery names what it fetches as a pull request; this one is the remote's HEAD.
    fetchRef({ ...repository, pullRequest: PullRequestNumber.make(1), headRef: "HEAD" }, "refs/prbox/head", options)

  /**
   * The user's dotfiles: a repository's default branch in a mirror of their
   * own (host `dotfiles` in the mirrors' folder, apart from any pull request's).
   */
  const fetchRemoteHead = Effect.fn("Workspaces.fetchRemoteHead")(function* (
    remoteUrl: string,
    options: ProgressOptions = {}
  ) {
    const dotfiles = { provider: "git", host: "dotfiles", repository: redactCredentials(remoteUrl), remoteUrl } as const
    return yield* headInto(dotfiles, options)
  })

  /** `prbox prebuild <repository>`: its default branch into the mirror its pull requests share. */
  const fetchRepository = Effect.fn("Workspaces.fetchRepository")(function* (
    repository: RepositoryRef,
    options: ProgressOptions = {}
  ) {
    return yield* headInto(repository, options)
  })

  return { fetchPullRequest, fetchRemoteHead, fetchRepository, withMirrorLock, mirrorPathOf }
})
