import type { ChangedFile } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type {
  FetchError,
  FileSystemFailed,
  GitCommandFailed,
  GitTimeout,
  PushRejected,
  UnsafeArgument,
  WorkspaceError
} from "./Errors.ts"
import type { GitUser } from "./Git.ts"
import type { PullRequestRef } from "./PullRequestRef.ts"
import type { RepositoryRef } from "./RepositoryRef.ts"

export {
  KEEP_BRANCH_PREFIX,
  type WorkspaceState,
  type WorkspaceSteps,
  workspaceSteps
} from "./WorkspaceUpdate.ts"

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

/** What names a repository's mirror: where it is and through which credentials profile. */
export type MirrorKey = Pick<PullRequestRef, "host" | "repository" | "profile">

export interface CreateWorkspaceOptions extends ProgressOptions {
  readonly mirrorPath: string
  readonly commit: string
  /** Absolute path of the new workspace; must not exist or be empty. */
  readonly destination: string
  /** The real remote, without credentials: what `origin` points to in the workspace. */
  readonly originUrl: string
  readonly branchName: string
  /**
   * Who the workspace is for, when not the daemon's own user (a root
   * daemon's sandbox user): the checkout runs as them, so its files are theirs.
   */
  readonly owner?: GitUser
  /**
   * False: only the clone (its `.git`, handed to `owner`); the caller checks
   * it out inside the sandbox, where no host program reads what the
   * sandbox writes meanwhile. Default true: checked out here.
   */
  readonly checkout?: boolean
}

/** A clone made without its files, and what to check out in it. */
export interface CloneCheckout {
  readonly destination: string
  readonly commit: string
  readonly branchName: string
  /** Who checks it out, when not the daemon's own user (as for createWorkspace). */
  readonly owner?: GitUser
}

export interface CreatedWorkspace {
  readonly path: string
  readonly branch: string
  readonly commit: string
}

export interface BaseDiffOptions {
  /** The PR's base branch when the code host tells it; the remote's default branch otherwise. */
  readonly base?: string
  /** Pathspecs relative to the repository's root, taken literally; none: everything. */
  readonly paths: ReadonlyArray<string>
  readonly stat: boolean
}

export interface BaseDiff {
  /** The merge-base of the head and the base branch. */
  readonly mergeBase: string
  readonly baseBranch: string
  /** `git diff <mergeBase> <head>` (or its `--stat`), whole: the caller bounds it. */
  readonly diff: string
  /** The files the diff changes (within `paths`), renames found. */
  readonly files: ReadonlyArray<ChangedFile>
}

/** Where `prbox push` sends a sandbox's commits: a remote (never with a credential in it) and its branch. */
export interface PushTarget {
  readonly url: string
  readonly branch: string
}

export interface ReviewPushOptions {
  readonly mirrorPath: string
  /** The bundle the sandbox's git made: one ref, the new commits on top of `head`. */
  readonly bundle: Uint8Array
  /** The PR head the sandbox's row records: the commits must fast-forward it; the push's lease expects it. */
  readonly head: string
  /** Given: pushed there once checked. Absent: only checked and shown. */
  readonly push?: PushTarget
}

/** One commit a push brings, as shown before it is sent: the sandbox's text, to be stripped before printing. */
export interface PushCommit {
  readonly commit: string
  /** `name <email>` */
  readonly author: string
  readonly subject: string
  readonly files: ReadonlyArray<string>
}

export interface PushReview {
  /** The bundle's commit: what is (or would be) the branch's new head. */
  readonly tip: string
  /** Newest first. */
  readonly commits: ReadonlyArray<PushCommit>
  readonly pushed: boolean
}

/** A file or folder directly inside a folder of a commit. */
export interface CommitEntry {
  readonly name: string
  readonly type: "file" | "dir"
}

/**
 * Read access to one commit of a mirror, without a checkout: what prbox
 * reads of a PR before it admits a sandbox (its devcontainer.json).
 */
export interface CommitFiles {
  /** A file's text, or undefined when the commit has no file there. */
  readonly read: (path: string) => Effect.Effect<string | undefined, GitCommandFailed | GitTimeout | UnsafeArgument>
  /** A folder's entries, or undefined when the commit has no folder there. */
  readonly list: (
    dir: string
  ) => Effect.Effect<ReadonlyArray<CommitEntry> | undefined, GitCommandFailed | GitTimeout | UnsafeArgument>
  /**
   * A file's bytes as the commit holds them (a binary file whole), or
   * undefined when the commit has no file there; a link is refused, and a
   * file larger than `maxBytes`.
   */
  readonly readBytes: (
    path: string,
    maxBytes: number
  ) => Effect.Effect<Uint8Array | undefined, GitCommandFailed | GitTimeout | UnsafeArgument | FileSystemFailed>
}

/**
 * Bare mirrors of pull request repositories and workspaces cloned from them.
 * Fetches and clones of one mirror are serialised; different mirrors proceed
 * in parallel. On this machine's git and files: NodeWorkspaces.
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
     * A repository's default branch (its remote's HEAD) fetched into a mirror
     * of its own, with the user's credentials: the user's dotfiles.
     */
    readonly fetchRemoteHead: (
      remoteUrl: string,
      options?: ProgressOptions
    ) => Effect.Effect<{ readonly mirrorPath: string; readonly commit: string }, FetchError>
    /**
     * A repository's default branch (its remote's HEAD) fetched into the
     * mirror its pull requests share: `prbox prebuild <repository>`.
     */
    readonly fetchRepository: (
      repository: RepositoryRef,
      options?: ProgressOptions
    ) => Effect.Effect<{ readonly mirrorPath: string; readonly commit: string }, FetchError>
    /**
     * A commit's files as a tar archive from its mirror (`git archive`, no
     * `.git`), refused when they hold more than `maxBytes`: files a container
     * unpacks as data.
     */
    readonly archiveCommit: (
      mirrorPath: string,
      commit: string,
      maxBytes: number
    ) => Effect.Effect<Uint8Array, WorkspaceError>
    /**
     * A self-contained clone of the mirror (copied objects, its own `.git`
     * directory), checked out at `commit` on a new branch (unless `checkout`
     * is false), `origin` set to `originUrl`. A failed attempt leaves no
     * destination behind.
     */
    readonly createWorkspace: (options: CreateWorkspaceOptions) => Effect.Effect<CreatedWorkspace, WorkspaceError>
    /** Checks out a clone made with `checkout: false`, on this machine (no container has run on it). */
    readonly checkoutClone: (options: CloneCheckout) => Effect.Effect<void, WorkspaceError>
    /** Where the repository's mirror is (or would be): a sandbox's PR finds its mirror again from its row. */
    readonly mirrorPath: (key: MirrorKey) => string
    /**
     * A PR's own changes in its mirror: `git diff <merge-base> <head>` against
     * `options.base` or the remote's default branch (fetched into the mirror
     * when it is missing there). Never runs git in a workspace.
     */
    readonly diffAgainstBase: (
      mirrorPath: string,
      head: string,
      options: BaseDiffOptions
    ) => Effect.Effect<BaseDiff, FetchError>
    /**
     * The merge-base of `head` and the base branch (`base`, else the remote's
     * default, fetched into the mirror when missing), with the branch's name:
     * where a PR's own changes start, without diffing them.
     */
    readonly mergeBase: (
      mirrorPath: string,
      head: string,
      base?: string
    ) => Effect.Effect<{ readonly branch: string; readonly mergeBase: string }, FetchError>
    /**
     * The PR's base branch (`base`, else the remote's default branch) and its
     * tip in the mirror, fetched into it when it is missing there, or always
     * with `refresh`.
     */
    readonly baseCommit: (
      mirrorPath: string,
      base: string | undefined,
      options?: { readonly refresh?: boolean }
    ) => Effect.Effect<{ readonly branch: string; readonly tip: string }, FetchError>
    /** Reads files of a fetched commit in its mirror, without a checkout (symbolic links are refused). */
    readonly commitFiles: (mirrorPath: string, commit: string) => CommitFiles
    /**
     * A git bundle of `commit` from its mirror, leaving out the history of
     * `have` (commits the receiver holds; those the mirror lacks are skipped):
     * how a commit reaches a workspace on another machine. Only objects go in
     * it; empty when the receiver holds all of it.
     */
    readonly bundleCommit: (
      mirrorPath: string,
      commit: string,
      have: ReadonlyArray<string>
    ) => Effect.Effect<Uint8Array, WorkspaceError>
    /**
     * A sandbox's commits checked (and pushed, with `push`) from a temporary
     * repository that borrows the mirror's objects; the mirror gains nothing.
     */
    readonly reviewPush: (options: ReviewPushOptions) => Effect.Effect<PushReview, PushRejected | WorkspaceError>
  }
>()("prbox/git/Workspaces") {}
