import { createHash, randomBytes } from "node:crypto"
import * as NodePath from "node:path"
import { Context, Effect, FileSystem, Layer, Ref, Semaphore } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { classifyFetchFailure, classifyMirrorFailure } from "./Classify.ts"
import {
  type FetchError,
  FileSystemFailed,
  GitCommandFailed,
  MirrorCorrupt,
  UnsafeArgument,
  type WorkspaceError
} from "./Errors.ts"
import { Git, type GitOutput } from "./Git.ts"
import type { PullRequestRef } from "./PullRequestRef.ts"
import { hasUrlCredentials, redactCredentials, stderrTail } from "./Redact.ts"
import { isSafeBranchName } from "./RefName.ts"

export interface WorkspacesConfig {
  /** The daemon's private state directory; mirrors live in `<stateDir>/mirrors`. */
  readonly stateDir: string
  /** Bound on one network fetch; default 10 minutes. */
  readonly fetchTimeoutMs?: number
  /** Bound on one local git command (init, clone, checkout); default 5 minutes. */
  readonly localTimeoutMs?: number
}

export interface ProgressOptions {
  /** Receives human-readable progress lines (git's own, redacted, and ours). */
  readonly onProgress?: (line: string) => Effect.Effect<void>
}

export interface FetchedPullRequest {
  readonly mirrorPath: string
  /** The pull request's head commit. */
  readonly commit: string
  /** The remote refs this fetch asked the server for: the pull request's head only. */
  readonly fetchedRefs: ReadonlyArray<string>
  /** False when an existing mirror of the repository was reused. */
  readonly mirrorCreated: boolean
}

export interface CreateWorkspaceOptions extends ProgressOptions {
  readonly mirrorPath: string
  readonly commit: string
  /** Absolute path of the new workspace; must not exist or be empty. */
  readonly destination: string
  /** The real remote, without credentials: what `origin` points to in the workspace. */
  readonly originUrl: string
  readonly branchName: string
}

export interface CreatedWorkspace {
  readonly path: string
  readonly branch: string
  readonly commit: string
}

/**
 * Bare mirrors of pull request repositories and workspaces cloned from them.
 * Fetches and clones of one mirror are serialised; different mirrors proceed
 * in parallel.
 */
export class Workspaces extends Context.Service<
  Workspaces,
  {
    /** Fetches the pull request's head ref, and nothing else, into the repository's mirror. */
    readonly fetchPullRequest: (
      ref: PullRequestRef,
      options?: ProgressOptions
    ) => Effect.Effect<FetchedPullRequest, FetchError>
    /**
     * A self-contained clone of the mirror (hardlinked objects, its own `.git`
     * directory), checked out at `commit` on a new branch, `origin` set to
     * `originUrl`. A failed attempt leaves no destination behind.
     */
    readonly createWorkspace: (options: CreateWorkspaceOptions) => Effect.Effect<CreatedWorkspace, WorkspaceError>
  }
>()("prbox/git/Workspaces") {
  static readonly layer = (config: WorkspacesConfig): Layer.Layer<Workspaces, never, Git | FileSystem.FileSystem> =>
    Layer.effect(Workspaces, make(config))
}

const noProgress = (): Effect.Effect<void> => Effect.void

const sanitise = (text: string): string => text.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^\./, "_")

const commitPattern = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/

const make = Effect.fn("Workspaces.make")(function* (config: WorkspacesConfig) {
  const git = yield* Git
  const fs = yield* FileSystem.FileSystem
  const mirrorsDir = NodePath.join(NodePath.resolve(config.stateDir), "mirrors")
  const fetchTimeoutMs = config.fetchTimeoutMs ?? 10 * 60_000
  const localTimeoutMs = config.localTimeoutMs ?? 5 * 60_000
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
  const mirrorPathOf = (ref: PullRequestRef): string => {
    const key = [ref.host, ref.repository, ref.profile ?? ""].join("\0")
    const hash = createHash("sha256").update(key).digest("hex").slice(0, 12)
    const name = sanitise(ref.repository.replace(/^\/+/, "")).slice(-80)
    return NodePath.join(mirrorsDir, sanitise(ref.host), `${name}-${hash}.git`)
  }

  const fsStep = <A>(operation: string, effect: Effect.Effect<A, PlatformError>) =>
    Effect.mapError(effect, (error) => new FileSystemFailed({ operation, detail: redactCredentials(error.message) }))

  // `--git-dir` keeps git from walking up to an enclosing repository when the
  // mirror is broken.
  const inMirror = (mirrorPath: string, args: ReadonlyArray<string>) =>
    git.run([`--git-dir=${mirrorPath}`, ...args], { cwd: NodePath.dirname(mirrorPath), timeoutMs: localTimeoutMs })

  const expectSuccess = (operation: string, mirrorPath: string) => (output: GitOutput) =>
    output.exitCode === 0 ? Effect.succeed(output) : Effect.fail(classifyMirrorFailure(operation, output, mirrorPath))

  const createMirror = Effect.fnUntraced(function* (mirrorPath: string, remoteUrl: string) {
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
      const init = yield* git.run(["init", "--bare", "--quiet", temporary], { cwd: parent, timeoutMs: localTimeoutMs })
      if (init.exitCode !== 0) {
        return yield* new GitCommandFailed({
          operation: "git init",
          detail: stderrTail(init.stderr),
          exitCode: init.exitCode
        })
      }
      yield* inMirror(temporary, ["config", "--end-of-options", "remote.origin.url", remoteUrl]).pipe(
        Effect.flatMap(expectSuccess("git config", temporary))
      )
      yield* fsStep("move the new mirror into place", fs.rename(temporary, mirrorPath))
    })
    yield* build.pipe(Effect.onError(() => Effect.ignore(fs.remove(temporary, { recursive: true }))))
  })

  /** Returns whether the mirror had to be created. */
  const ensureMirror = Effect.fnUntraced(function* (
    mirrorPath: string,
    remoteUrl: string,
    progress: (line: string) => Effect.Effect<void>
  ) {
    if (!(yield* fsStep("inspect the mirror", fs.exists(mirrorPath)))) {
      yield* progress(`creating mirror ${mirrorPath}`)
      yield* createMirror(mirrorPath, remoteUrl)
      return true
    }
    const check = yield* inMirror(mirrorPath, ["rev-parse", "--is-bare-repository"])
    if (check.exitCode !== 0 || check.stdout.trim() !== "true") {
      return yield* new MirrorCorrupt({
        operation: "git rev-parse",
        detail: stderrTail(check.stderr) || "not a bare repository",
        mirrorPath
      })
    }
    // The same repository may be reached by another URL this time (https after ssh).
    yield* inMirror(mirrorPath, ["config", "--end-of-options", "remote.origin.url", remoteUrl]).pipe(
      Effect.flatMap(expectSuccess("git config", mirrorPath))
    )
    yield* progress(`reusing mirror ${mirrorPath}`)
    return false
  })

  const fetchInto = Effect.fnUntraced(function* (
    ref: PullRequestRef,
    mirrorPath: string,
    progress: (line: string) => Effect.Effect<void>
  ) {
    const mirrorCreated = yield* ensureMirror(mirrorPath, ref.remoteUrl, progress)
    const localRef = `refs/prbox/pr/${ref.pullRequest}`
    yield* progress(`fetching ${ref.headRef} from ${redactCredentials(ref.remoteUrl)}`)
    const fetched = yield* git.run(
      [
        `--git-dir=${mirrorPath}`,
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "--progress",
        "--end-of-options",
        "origin",
        `+${ref.headRef}:${localRef}`
      ],
      { cwd: NodePath.dirname(mirrorPath), timeoutMs: fetchTimeoutMs, onStderrLine: progress }
    )
    if (fetched.exitCode !== 0) return yield* classifyFetchFailure("git fetch", fetched, ref, mirrorPath)
    const resolved = yield* inMirror(mirrorPath, ["rev-parse", "--verify", "--end-of-options", `${localRef}^{commit}`])
    const commit = resolved.stdout.trim()
    if (resolved.exitCode !== 0 || !commitPattern.test(commit)) {
      return yield* new MirrorCorrupt({
        operation: "git rev-parse",
        detail: stderrTail(resolved.stderr) || `cannot read ${localRef}`,
        mirrorPath
      })
    }
    const result: FetchedPullRequest = { mirrorPath, commit, fetchedRefs: [ref.headRef], mirrorCreated }
    return result
  })

  const fetchPullRequest = Effect.fn("Workspaces.fetchPullRequest")(function* (
    ref: PullRequestRef,
    options: ProgressOptions = {}
  ) {
    if (hasUrlCredentials(ref.remoteUrl)) {
      return yield* new UnsafeArgument({
        operation: "fetch",
        detail: `the remote ${redactCredentials(ref.remoteUrl)} carries credentials; use a credential helper or ssh-agent`
      })
    }
    const progress = options.onProgress ?? noProgress
    const mirrorPath = mirrorPathOf(ref)
    // A corrupt mirror is only a cache: re-create it once, then give up.
    return yield* fetchInto(ref, mirrorPath, progress).pipe(
      Effect.catchTag("MirrorCorrupt", (corrupt) =>
        progress(`mirror ${mirrorPath} is corrupt (${corrupt.detail}); re-creating it`).pipe(
          Effect.andThen(fsStep("remove the corrupt mirror", fs.remove(mirrorPath, { recursive: true }))),
          Effect.andThen(fetchInto(ref, mirrorPath, progress))
        )
      ),
      withMirrorLock(mirrorPath)
    )
  })

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
    const inWorkspace = (args: ReadonlyArray<string>) =>
      git.run(args, { cwd: destination, timeoutMs: localTimeoutMs }).pipe(
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
    const build = Effect.gen(function* () {
      yield* progress(`cloning ${mirrorPath} into ${destination}`)
      // `--local` hardlinks the mirror's objects; the lock keeps a fetch (and
      // its auto-gc) from repacking them mid-clone.
      const cloned = yield* git
        .run(["clone", "--no-checkout", "--local", "--no-tags", "--quiet", "--", mirrorPath, destination], {
          cwd: parent,
          timeoutMs: localTimeoutMs
        })
        .pipe(withMirrorLock(mirrorPath))
      if (cloned.exitCode !== 0) {
        return yield* classifyMirrorFailure("git clone", cloned, mirrorPath)
      }
      yield* progress(`checking out ${commit} as ${branchName}`)
      yield* inWorkspace(["checkout", "--quiet", "-b", branchName, commit, "--"])
      // The clone's origin is the mirror; the workspace's is the real remote.
      yield* inWorkspace(["remote", "set-url", "--end-of-options", "origin", originUrl])
      const created: CreatedWorkspace = { path: destination, branch: branchName, commit }
      return created
    })
    return yield* build.pipe(
      Effect.onError(() => (existed ? Effect.void : Effect.ignore(fs.remove(destination, { recursive: true }))))
    )
  })

  return Workspaces.of({ fetchPullRequest, createWorkspace })
})
