import type { SandboxConflict, SandboxNotFound } from "@prbox/domain"
import type { InvalidPullRequestInput, PullRequestMissing, PullRequestUnresolved } from "./create/Errors.ts"
import type {
  DiscoveryFailed,
  GitFailed,
  HostFailure,
  InvalidConfig,
  InvalidPath,
  PortClosed,
  PreviewUnavailable,
  RuntimeError,
  StoreFailure,
  UnknownService
} from "./Errors.ts"
import type { InvalidDevcontainer } from "./environment/Errors.ts"
import type { TooLarge } from "./files/Errors.ts"
import type { CleanupIncomplete } from "./gc/Errors.ts"
import type { JobNotFound } from "./jobs/Errors.ts"
import type { CodeServerUnavailable, DefaultImageUnavailable } from "./SandboxTools.ts"
import type { DestroyNotConfirmed, PushRefused, UpdateRefused } from "./sandbox/Errors.ts"

/** Every error the engine's public operations (SandboxService, Reconciler, Gc) fail with. */
export type EngineError =
  | SandboxNotFound
  | SandboxConflict
  | StoreFailure
  | DestroyNotConfirmed
  | InvalidPullRequestInput
  | PullRequestMissing
  | PullRequestUnresolved
  | InvalidDevcontainer
  | DiscoveryFailed
  | InvalidConfig
  | RuntimeError
  | HostFailure
  | CleanupIncomplete
  | CodeServerUnavailable
  | DefaultImageUnavailable
  | UpdateRefused
  | PushRefused
  | GitFailed
  | PortClosed
  | UnknownService
  | PreviewUnavailable
  | InvalidPath
  | TooLarge
  | JobNotFound
