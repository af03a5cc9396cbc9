import {
  type ApiError,
  Conflict,
  DockerUnavailable,
  GitFailure,
  Internal,
  InvalidConfig,
  InvalidPrRef,
  isApiError,
  NotFound
} from "@prbox/protocol"
import { Effect } from "effect"

const GIT_TAGS = new Set([
  "PullRequestNotFound",
  "RepositoryNotFound",
  "NetworkUnreachable",
  "MirrorCorrupt",
  "UnsafeArgument",
  "GitCommandFailed",
  "GitTimeout",
  "FileSystemFailed"
])

const messageOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
    return error.message
  }
  return String(error)
}

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
    ? error._tag
    : undefined

/**
 * The engine's (and adapters') errors as API errors. Their messages are built
 * to be shown (ids, fixed reasons, no secrets), so they travel as they are.
 */
export const toApiError = (error: unknown): ApiError => {
  if (isApiError(error)) return error
  const message = messageOf(error)
  switch (tagOf(error)) {
    case "SandboxNotFound":
      return new NotFound({ message })
    case "SandboxConflict":
    case "InvalidTransition":
    case "LiveSandboxExists":
      return new Conflict({ message })
    case "InvalidPullRequestInput":
    case "InvalidPullRequestRef":
      return new InvalidPrRef({ message })
    case "InvalidConfig":
      return new InvalidConfig({ message })
    case "RuntimeError":
    case "DestroyNotConfirmed":
    case "DiscoveryFailed":
    case "EngineUnavailable":
      return new DockerUnavailable({ message })
    default: {
      const tag = tagOf(error)
      if (tag !== undefined && GIT_TAGS.has(tag)) return new GitFailure({ message })
      return new Internal({ message })
    }
  }
}

/** Maps every failure of `effect` to an API error. */
export const api = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ApiError, R> =>
  Effect.mapError(effect, toApiError)
