import type { WorkspaceState } from "@prbox/git"
import type { Effect } from "effect"

/**
 * git on one running sandbox's workspace, inside its container (the only
 * place git may run on it once the container may have run): what `prbox
 * update` needs to move it to its PR's new head.
 */
export interface WorkspaceGit<E> {
  /** Its head and changed files (tracked and untracked). */
  readonly state: Effect.Effect<WorkspaceState, E>
  /**
   * Puts `commit` of the mirror (on this machine) into the workspace's
   * objects, refs and files untouched; `have` names commits the workspace
   * holds, so that only what it lacks is carried.
   */
  readonly bringCommit: (mirrorPath: string, commit: string, have: ReadonlyArray<string>) => Effect.Effect<void, E>
  /** Whether the workspace's objects hold `commit`. */
  readonly hasCommit: (commit: string) => Effect.Effect<boolean, E>
  readonly isAncestor: (ancestor: string, descendant: string) => Effect.Effect<boolean, E>
  /** `git merge --ff-only`: the checked-out branch moves to `commit`, or nothing changes. */
  readonly fastForward: (commit: string) => Effect.Effect<void, E>
  /** The branch `keepAndReset` would keep the head on now: `prbox/before-update-<next n>`. */
  readonly nextKeepBranch: Effect.Effect<string, E>
  /** Keeps the head on `prbox/before-update-<n>`, then `git reset --hard commit`; returns the branch. */
  readonly keepAndReset: (commit: string) => Effect.Effect<string, E>
}
