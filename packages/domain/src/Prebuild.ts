import type { Timestamp } from "./Ids.ts"

/**
 * `making`: a build runs (or ran in a daemon that stopped: reconcile ends it);
 * `ready`: a PR whose environment has its key may start from it; `failed`:
 * its steps failed, kept so the next attempt waits for a new base or key.
 */
export type PrebuildState = "making" | "ready" | "failed"

/**
 * A prebuilt environment of a repository's base branch: the environment's
 * image with the create-time steps (`onCreateCommand`,
 * `updateContentCommand`) run on a checkout of the base, kept by content
 * (`key`, PrebuildKey.ts in the engine).
 */
export interface Prebuild {
  /** This prebuild's own id: the names of its volume and image derive from it. */
  readonly id: string
  /** The environment's content key (its inputs hashed): what a PR must match to start from it. */
  readonly key: string
  /** Where the repository lives and its name, as a sandbox row has them. */
  readonly host: string
  readonly repository: string
  readonly baseBranch: string
  /** The base branch's commit it was made from. */
  readonly baseCommit: string
  /** What its steps changed outside the workspace and home, committed from its container (`prbox-prebuild:<id>`), once made. */
  readonly image: string | null
  /** The Docker volume holding the prebuilt workspace, once made. */
  readonly volume: string | null
  /** What it holds on disk (its workspace and home volumes and its image's own layer), once measured. */
  readonly sizeBytes: number | null
  readonly state: PrebuildState
  /** Why it failed (a safe reason, cut as a sandbox's error is). */
  readonly error: string | null
  readonly startedAt: Timestamp
  readonly readyAt: Timestamp | null
  /** The last open that started from it. */
  readonly usedAt: Timestamp | null
}

/**
 * The labels on a prebuild's container and volumes: reconcile and gc find them by these (its image
 * has its own, since a container made from an image inherits the image's labels: engine PrebuildNames.ts).
 */
export const PREBUILD_LABELS = {
  /** Its id (never `dev.prbox.sandbox`: a prebuild's container is never counted as a sandbox). */
  prebuild: "dev.prbox.prebuild",
  key: "dev.prbox.prebuild.key"
} as const
