/**
 * The errors that cross the engine's rooms (the store's, the host's, the
 * runtime's generic failure, a setup's), and the helpers that make them.
 * Each room keeps its own errors in its `Errors.ts`; `EngineError.ts` is the
 * union of all. Messages carry ids, statuses, paths and fixed reasons only:
 * never a password or token.
 */
import { InvalidTransition } from "@prbox/domain"
import { LiveSandboxExists, RowDecodeError, StoreError } from "@prbox/store"
import { Effect, Schema } from "effect"
import type { PlatformError } from "effect/PlatformError"

/** The store failed (other than "not found"); the detail names the operation. */
export class StoreFailure extends Schema.TaggedError<StoreFailure>()("StoreFailure", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

/** A stop was requested: the worker ends quietly and the stop writes the outcome. */
export class StopWon extends Schema.TaggedError<StopWon>()("StopWon", {}) {}

/** A create or restart step failed for a reason that is safe to store and show. */
export class SetupFailed extends Schema.TaggedError<SetupFailed>()("SetupFailed", { reason: Schema.String }) {
  override get message(): string {
    return this.reason
  }
}

/** Docker (or the store, or the state directory) could not be enumerated: the pass changed nothing. */
export class DiscoveryFailed extends Schema.TaggedError<DiscoveryFailed>()("DiscoveryFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `reconcile could not list ${this.operation}: ${this.detail}; nothing was changed`
  }
}

export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `invalid config ${this.path}: ${this.detail}`
  }
}

/**
 * A runtime failure whose outcome is unknown (engine down, timeout, refused):
 * the lifecycle treats it as "not confirmed" and never as success.
 */
export class RuntimeError extends Schema.TaggedError<RuntimeError>()("RuntimeError", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

/** A file operation on the host failed (a full disk, a read-only mount, a path that is a file). */
export class HostFailure extends Schema.TaggedError<HostFailure>()("HostFailure", {
  operation: Schema.String,
  /** The errno code (`ENOSPC`, `EROFS`, ...). */
  detail: Schema.String
}) {
  override get message(): string {
    return `could not ${this.operation} (${this.detail})`
  }
}

/** A git step of an update failed (fetching the PR, reading or moving the workspace); the detail is redacted. */
export class GitFailed extends Schema.TaggedError<GitFailed>()("GitFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: ${this.detail}`
  }
}

/** A path an agent or the CLI named is outside the sandbox's workspace, or not what the operation needs. */
export class InvalidPath extends Schema.TaggedError<InvalidPath>()("InvalidPath", {
  id: Schema.String,
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.id}: ${JSON.stringify(this.path.slice(0, 200))}: ${this.reason}`
  }
}

/** The errno code of a host I/O failure (`ENOSPC`, `ENOTDIR`, ...), else its normalized tag. */
export const hostErrorCode = (error: PlatformError): string => {
  const cause = "cause" in error.reason ? error.reason.cause : undefined
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return typeof code === "string" ? code : error.reason._tag
}

/**
 * The row's `error`: our errors' messages are built to be safe (ids, fixed
 * reasons, no secrets); anything else is reduced to its tag.
 */
export const safeReason = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const message = (error as { readonly message?: unknown }).message
    return typeof message === "string" && message.length > 0 ? message.slice(0, 500) : String(error._tag)
  }
  return "unexpected failure"
}

/** What the store can fail with besides "not found". */
export type StoreFailures = StoreError | RowDecodeError | LiveSandboxExists | InvalidTransition

const isStoreFailure = (error: unknown): error is StoreFailures =>
  error instanceof StoreError ||
  error instanceof RowDecodeError ||
  error instanceof LiveSandboxExists ||
  error instanceof InvalidTransition

/** Store failures other than "not found" surface as one engine error. */
export const mapStoreErrors =
  (operation: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, StoreFailures> | StoreFailure, R> =>
    Effect.mapError(effect, (error) =>
      isStoreFailure(error)
        ? new StoreFailure({ operation, detail: error.message })
        : (error as Exclude<E, StoreFailures>)
    )

// The runtime port's own (ContainerRuntime.ts), besides RuntimeError.

/**
 * The host port a container was created with is held by something else, so
 * it cannot start there. Never leaves the engine: the start moves the sandbox
 * to a new container on a new port.
 */
export class PortTaken extends Schema.TaggedError<PortTaken>()("PortTaken", { detail: Schema.String }) {
  override get message(): string {
    return this.detail
  }
}

/** The container stopped as soon as it started (its command exited): nothing will answer. */
export class ContainerExited extends Schema.TaggedError<ContainerExited>()("ContainerExited", {
  exitCode: Schema.Number
}) {
  override get message(): string {
    return `the container exited at start (exit code ${this.exitCode})`
  }
}

/**
 * An image build failed: the Dockerfile's step and the engine's message
 * ("Step 3/5 : RUN npm ci: The command ... returned a non-zero code: 1"), or
 * a Dockerfile or context that cannot be built. Never leaves the engine: the
 * worker records it on the row.
 */
export class ImageBuildFailed extends Schema.TaggedError<ImageBuildFailed>()("ImageBuildFailed", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** Nothing listens on that port inside the sandbox (a preview answers 404). */
export class PortClosed extends Schema.TaggedError<PortClosed>()("PortClosed", {
  id: Schema.String,
  port: Schema.Number,
  /** Another Compose service's port. */
  service: Schema.optionalKey(Schema.String)
}) {
  override get message(): string {
    return this.service === undefined
      ? `nothing listens on port ${this.port} in sandbox ${this.id}`
      : `nothing listens on port ${this.port} of service ${this.service} in sandbox ${this.id}`
  }
}

/** A preview named a service the sandbox's app does not reach by name (ServicePreview.ts `serviceRefusal`); nothing was dialled. */
export class UnknownService extends Schema.TaggedError<UnknownService>()("UnknownService", {
  id: Schema.String,
  service: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.id} has no service ${JSON.stringify(this.service.slice(0, 64))} to preview: ${this.reason}`
  }
}

/**
 * The sandbox's ports cannot be reached: its container was made before
 * previews (no relay port), or the in-container relay could not start. The
 * reason says what to do.
 */
export class PreviewUnavailable extends Schema.TaggedError<PreviewUnavailable>()("PreviewUnavailable", {
  id: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `previews of sandbox ${this.id} are unavailable: ${this.reason}`
  }
}

/**
 * A command's working folder did not resolve inside the folder it must stay
 * in (`CommandOptions.within`), so the command never started; `exitCode` is
 * `prbox_resolve`'s, or CWD_NOT_FOLDER. Never leaves the engine: the caller
 * turns it into InvalidPath.
 */
export class CwdRefused extends Schema.TaggedError<CwdRefused>()("CwdRefused", { exitCode: Schema.Number }) {}
