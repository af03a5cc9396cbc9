import type { EnvironmentPlan, PoolEntry, Sandbox, SandboxEnvironment, SandboxId } from "@prbox/domain"
import { Context, type Effect, type Redacted } from "effect"
import type { LiveSandboxExists, NewSandbox, RowDecodeError, StoreError } from "./SandboxRepo.ts"

/** A pool entry as it is inserted (`making`, no container yet), with what the claiming sandbox's row will hold. */
export interface NewPoolEntry extends Omit<PoolEntry, "state" | "containerId" | "hostPort" | "createdAt"> {
  readonly accessPassword: Redacted.Redacted<string>
  readonly environment: SandboxEnvironment
  readonly environmentPlan: EnvironmentPlan
  readonly createdAt: number
}

/**
 * What a claim needs of the PR: a new row's fields but the password (the
 * entry's becomes the sandbox's), with its source, and what the row says of
 * its setup until the claim's setup ends (`setupError`).
 */
export interface PoolClaim extends Omit<NewSandbox, "id" | "accessPassword" | "workspacePath"> {
  readonly setupError: string
}

/**
 * The warm pool's entries, on the store's connection. `claim` and `take`
 * each delete a `ready` entry only if it is still there: of a claim and a
 * gc racing for one entry exactly one wins.
 */
export interface PoolRepoShape {
  readonly insert: (entry: NewPoolEntry) => Effect.Effect<void, StoreError>
  /** `making` → `ready` with its started container; `false` when the entry is gone. */
  readonly ready: (id: SandboxId, containerId: string, hostPort: number) => Effect.Effect<boolean, StoreError>
  /** Every entry, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<PoolEntry>, StoreError | RowDecodeError>
  /**
   * In one transaction, the oldest ready entry of `key` is deleted and the
   * PR's sandbox row inserted with its id, password, container, port and
   * environment, in `starting` (its container runs: the claim's one status
   * write is its `running`), with the base commit and the workspace it
   * holds; undefined when none is ready. The row's workspace is left unset
   * (the claim's `running` write records it once the PR's head is checked
   * out there), so a row killed before is never restarted on the base's
   * checkout.
   */
  readonly claim: (
    key: string,
    pr: PoolClaim
  ) => Effect.Effect<
    { readonly row: Sandbox; readonly baseCommit: string; readonly workspacePath: string } | undefined,
    StoreError | RowDecodeError | LiveSandboxExists
  >
  /** Deletes the entry if it is still the pool's (any state); `false` when it was claimed or gone. */
  readonly take: (id: SandboxId) => Effect.Effect<PoolEntry | undefined, StoreError | RowDecodeError>
}

export class PoolRepo extends Context.Service<PoolRepo, PoolRepoShape>()("prbox/store/PoolRepo") {}
