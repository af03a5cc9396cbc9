import type { WorkspaceError, WorkspaceState, Workspaces } from "@prbox/git"
import { Effect } from "effect"
import type { Ownership } from "./Ownership.ts"

/**
 * git on one running sandbox's workspace, wherever the copy that counts
 * is: what `prbox update` needs to move it to its PR's new head.
 */
export interface WorkspaceGit<E> {
  /** Its head, changed files (tracked and untracked) and `origin`. */
  readonly state: Effect.Effect<WorkspaceState, E>
  /**
   * Puts `commit` of the mirror (on this machine) into the workspace's
   * objects, refs and files untouched; `have` names commits the workspace
   * holds, so that only what it lacks is carried.
   */
  readonly bringCommit: (mirrorPath: string, commit: string, have: ReadonlyArray<string>) => Effect.Effect<void, E>
  readonly isAncestor: (ancestor: string, descendant: string) => Effect.Effect<boolean, E>
  /** `git merge --ff-only`: the checked-out branch moves to `commit`, or nothing changes. */
  readonly fastForward: (commit: string) => Effect.Effect<void, E>
  /** The branch `keepAndReset` would keep the head on now: `prbox/before-update-<next n>`. */
  readonly nextKeepBranch: Effect.Effect<string, E>
  /** Keeps the head on `prbox/before-update-<n>`, then `git reset --hard commit`; returns the branch. */
  readonly keepAndReset: (commit: string) => Effect.Effect<string, E>
  /** Gives what git wrote to the sandbox's user (whatever happened; never fails). */
  readonly handBack: Effect.Effect<void>
}

/** The workspace on this machine (the engine bind-mounts it): the daemon's git, then a hand-back of what it wrote. */
export const hostWorkspaceGit = (
  workspaces: Workspaces["Service"],
  ownership: Ownership,
  path: string
): WorkspaceGit<WorkspaceError> => ({
  state: workspaces.workspaceState(path),
  bringCommit: (mirrorPath, commit) => workspaces.bringCommit(path, mirrorPath, commit),
  isAncestor: (ancestor, descendant) => workspaces.isAncestor(path, ancestor, descendant),
  fastForward: (commit) => workspaces.fastForward(path, commit),
  nextKeepBranch: workspaces.nextKeepBranch(path),
  keepAndReset: (commit) => workspaces.keepAndReset(path, commit),
  handBack: Effect.ignore(ownership.handBack(path))
})
