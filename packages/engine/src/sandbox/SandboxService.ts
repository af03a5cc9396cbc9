import type { Sandbox, SandboxConflict, SandboxEvent, SandboxId, SandboxNotFound } from "@prbox/domain"
import { Context, type Effect, type Stream } from "effect"
import type { ExecOutcome } from "../ContainerRuntime.ts"
import type { InvalidPullRequestInput, PullRequestMissing, PullRequestUnresolved } from "../create/Errors.ts"
import type { PrebuildNow, PrebuildOutcome } from "../create/PrebuildNow.ts"
import type {
  DiscoveryFailed,
  GitFailed,
  HostFailure,
  InvalidConfig,
  InvalidPath,
  RuntimeError,
  StoreFailure
} from "../Errors.ts"
import type { InvalidDevcontainer } from "../environment/Errors.ts"
import type { ExecOptions } from "../exec/CommandPlace.ts"
import type { DestroyNotConfirmed, PushRefused, UpdateRefused } from "./Errors.ts"
import type { PushOptions, PushReport } from "./Push.ts"
import type { UpdateReport } from "./Update.ts"

export type { ExecOptions } from "../exec/CommandPlace.ts"

import type { OpenRequest } from "../create/OpenRequest.ts"

export type { OpenRequest } from "../create/OpenRequest.ts"

export type OpenError =
  | InvalidPullRequestInput
  | PullRequestMissing
  | PullRequestUnresolved
  | InvalidDevcontainer
  | GitFailed
  | InvalidConfig
  | SandboxNotFound
  | SandboxConflict
  | RuntimeError
  | DiscoveryFailed
  | StoreFailure
export type LifecycleError =
  | SandboxNotFound
  | SandboxConflict
  | DestroyNotConfirmed
  | RuntimeError
  | HostFailure
  | StoreFailure

export interface SandboxServiceShape {
  /**
   * One live sandbox per PR: returns the live one (after at most one inspect of
   * its container) or admits a new one and returns once its worker started.
   */
  readonly open: (request: OpenRequest) => Effect.Effect<Sandbox, OpenError>
  readonly get: (id: SandboxId) => Effect.Effect<Sandbox, SandboxNotFound | StoreFailure>
  readonly list: Effect.Effect<ReadonlyArray<Sandbox>, StoreFailure>
  readonly listAll: Effect.Effect<ReadonlyArray<Sandbox>, StoreFailure>
  /**
   * The store's write generation: it moves on every write, so `list` and
   * `listAll` answer the same at one generation (callers may cache by it).
   */
  readonly generation: Effect.Effect<number>
  /** Stop wins over any create or restart step of the sandbox. */
  readonly stop: (id: SandboxId) => Effect.Effect<Sandbox, LifecycleError>
  readonly restart: (id: SandboxId) => Effect.Effect<Sandbox, LifecycleError>
  /**
   * Moves a running sandbox's workspace to its PR's new head (fast-forward,
   * or with `force` past a force-push, keeping the old head on a branch),
   * never over uncommitted changes; then runs `updateContentCommand`.
   */
  readonly update: (
    id: SandboxId,
    options: { readonly force: boolean }
  ) => Effect.Effect<UpdateReport, SandboxNotFound | SandboxConflict | UpdateRefused | GitFailed | StoreFailure>
  /**
   * The sandbox's new commits on its PR's head, checked and shown, and with
   * `confirm` pushed to the PR's source branch with the user's credentials
   * (Push.ts); a refusal changes nothing.
   */
  readonly push: (
    id: SandboxId,
    options: PushOptions
  ) => Effect.Effect<PushReport, SandboxNotFound | SandboxConflict | PushRefused | GitFailed | StoreFailure>
  /** A new container on the kept workspace, home and port; returns the row handed to its worker. */
  readonly rebuild: (id: SandboxId) => Effect.Effect<Sandbox, LifecycleError | InvalidDevcontainer>
  /** Deletes container, workspace, home and row; a destroy that is not confirmed leaves the fence. */
  readonly delete: (id: SandboxId) => Effect.Effect<void, LifecycleError>
  /** The sandbox's journal (status changes and progress lines), in order. */
  readonly logs: (
    id: SandboxId,
    options: { readonly afterSeq?: number; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<SandboxEvent>, SandboxNotFound | StoreFailure>
  readonly touch: (id: SandboxId) => Effect.Effect<void, SandboxNotFound | StoreFailure>
  /**
   * Runs `argv` in a running, unfenced sandbox (stdin off, bounded in time
   * and output); at its deadline its processes are killed in the container.
   */
  readonly exec: (
    id: SandboxId,
    argv: ReadonlyArray<string>,
    options: ExecOptions
  ) => Effect.Effect<
    ExecOutcome,
    SandboxNotFound | SandboxConflict | InvalidPath | RuntimeError | HostFailure | StoreFailure
  >
  /**
   * `prbox prebuild`: the input's repository's base branch made into a
   * prebuild now (or found up to date, or being made); its progress as lines.
   */
  readonly prebuild: (
    request: OpenRequest,
    onProgress: (line: string) => Effect.Effect<void>
  ) => Effect.Effect<PrebuildOutcome, Effect.Error<ReturnType<PrebuildNow["Service"]>>>
  /** Live journal events from now on. */
  readonly events: Stream.Stream<SandboxEvent>
  /** Resolves when no worker of the sandbox is in flight (for callers that follow a create). */
  readonly awaitIdle: (id: SandboxId) => Effect.Effect<void>
}

export class SandboxService extends Context.Service<SandboxService, SandboxServiceShape>()(
  "prbox/engine/SandboxService"
) {}
