import type { Sandbox, SandboxConflict, SandboxEvent, SandboxId, SandboxNotFound } from "@prbox/domain"
import { Context, type Effect, Schema, type Stream } from "effect"
import type { InvalidConfig } from "./Config.ts"
import type { ExecOutcome, RuntimeError } from "./ContainerRuntime.ts"
import type { DiscoveryFailed } from "./Reconcile.ts"

/** What `prbox open` asks for: anything the PR reference parser accepts. */
export interface OpenRequest {
  readonly input: string
  readonly pr?: number
  readonly ref?: string
}

/** The PR reference could not be understood; the reason is safe to show. */
export class InvalidPullRequestInput extends Schema.TaggedError<InvalidPullRequestInput>()("InvalidPullRequestInput", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/** Docker did not confirm a stop or removal: the sandbox is fenced until `prbox rm` succeeds. */
export class DestroyNotConfirmed extends Schema.TaggedError<DestroyNotConfirmed>()("DestroyNotConfirmed", {
  id: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.id}: Docker did not confirm the container is gone (${this.detail}); it is fenced until \`prbox rm ${this.id}\` succeeds`
  }
}

export class StoreFailure extends Schema.TaggedError<StoreFailure>()("StoreFailure", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

export type OpenError =
  | InvalidPullRequestInput
  | InvalidConfig
  | SandboxNotFound
  | SandboxConflict
  | RuntimeError
  | DiscoveryFailed
  | StoreFailure
export type LifecycleError = SandboxNotFound | SandboxConflict | DestroyNotConfirmed | RuntimeError | StoreFailure

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
  /** Deletes container, workspace and row; a destroy that is not confirmed leaves the fence. */
  readonly cleanup: (id: SandboxId) => Effect.Effect<void, LifecycleError>
  /** The sandbox's journal (status changes and progress lines), in order. */
  readonly logs: (
    id: SandboxId,
    options: { readonly afterSeq?: number; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<SandboxEvent>, SandboxNotFound | StoreFailure>
  readonly touch: (id: SandboxId) => Effect.Effect<void, SandboxNotFound | StoreFailure>
  /** Runs `argv` in a running, unfenced sandbox (stdin off, bounded in time and output). */
  readonly exec: (
    id: SandboxId,
    argv: ReadonlyArray<string>,
    options: { readonly timeoutMs: number; readonly maxOutputBytes: number }
  ) => Effect.Effect<ExecOutcome, SandboxNotFound | SandboxConflict | RuntimeError | StoreFailure>
  /** Live journal events from now on. */
  readonly events: Stream.Stream<SandboxEvent>
  /** Resolves when no worker of the sandbox is in flight (for callers that follow a create). */
  readonly awaitIdle: (id: SandboxId) => Effect.Effect<void>
}

export class SandboxService extends Context.Service<SandboxService, SandboxServiceShape>()(
  "prbox/engine/SandboxService"
) {}
