import type { EngineError } from "@prbox/engine"
import {
  type ApiError,
  Conflict,
  DockerUnavailable,
  GitFailure,
  Internal,
  InvalidConfig,
  InvalidDevcontainer,
  InvalidPath,
  InvalidPrRef,
  NotAvailable,
  NotFound,
  PushRefused,
  TooLarge,
  UpdateRefused
} from "@prbox/protocol"
import { Effect } from "effect"

/** Every error the engine's services fail with (the union the daemon maps). */
export type EngineFailure = EngineError

export type EngineFailureTag = EngineFailure["_tag"]

type ApiErrorClass = new (fields: { readonly message: string }) => ApiError

/**
 * The API error each engine error becomes. Its type names every tag of
 * `EngineFailure`: a new engine error does not compile until it is mapped here.
 */
export const apiErrorOf: { readonly [Tag in EngineFailureTag]: ApiErrorClass } = {
  SandboxNotFound: NotFound,
  SandboxConflict: Conflict,
  InvalidPullRequestInput: InvalidPrRef,
  PullRequestMissing: NotFound,
  // Its message names what to configure, or `--ref`.
  PullRequestUnresolved: NotAvailable,
  InvalidDevcontainer: InvalidDevcontainer,
  InvalidConfig: InvalidConfig,
  RuntimeError: DockerUnavailable,
  DestroyNotConfirmed: DockerUnavailable,
  DiscoveryFailed: DockerUnavailable,
  StoreFailure: Internal,
  HostFailure: Internal,
  CleanupIncomplete: Internal,
  // This host cannot provide it (a build tool, root, apt); the message says what to do.
  CodeServerUnavailable: NotAvailable,
  DefaultImageUnavailable: NotAvailable,
  UpdateRefused: UpdateRefused,
  PushRefused: PushRefused as unknown as ApiErrorClass,
  GitFailed: GitFailure,
  PortClosed: NotFound,
  UnknownService: NotFound,
  // Made before previews, or its relay could not start: the message says what to do (rebuild).
  PreviewUnavailable: Conflict,
  InvalidPath: InvalidPath,
  TooLarge: TooLarge,
  JobNotFound: NotFound
}

/**
 * The engine errors that are a 500 on purpose: the daemon's own state failed
 * (the store, or its host file system: the message names the errno), or a gc/prune run that the maintenance endpoints answer with
 * their report before it could get here.
 */
export const internalOnPurpose: ReadonlySet<EngineFailureTag> = new Set([
  "StoreFailure",
  "HostFailure",
  "CleanupIncomplete"
])

/**
 * An engine error as an API error. Engine messages are built to be shown
 * (ids, fixed reasons, no secrets), so they travel as they are.
 */
export const toApiError = (error: EngineFailure): ApiError => {
  if (error._tag === "UpdateRefused") {
    return new UpdateRefused({
      message: error.message,
      ...(error.changedFiles.length === 0 ? {} : { changedFiles: error.changedFiles })
    })
  }
  if (error._tag === "PushRefused") {
    return new PushRefused({
      message: error.message,
      kind: error.kind,
      ...(error.changedFiles.length === 0 ? {} : { changedFiles: error.changedFiles })
    })
  }
  if (error._tag === "SandboxConflict" && error.state !== undefined) {
    return new Conflict({ message: error.message, state: error.state })
  }
  return new apiErrorOf[error._tag]({ message: error.message })
}

/** Maps every failure of an engine call to its API error. */
export const api = <A, E extends EngineFailure, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ApiError, R> =>
  Effect.mapError(effect, toApiError)
