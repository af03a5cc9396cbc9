import { type PullRequestTarget, parsePullRequestTarget } from "@prbox/git"
import { Effect, Result } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { InvalidPullRequestInput } from "./Errors.ts"

/** What `prbox open` (and `prbox prebuild`) asks for: anything the PR reference parser accepts. */
export interface OpenRequest {
  readonly input: string
  readonly pr?: number
  readonly ref?: string
  /** Which of the PR's named devcontainer configurations (`.devcontainer/<name>/devcontainer.json`). */
  readonly devcontainer?: string
}

/** The PR an open or prebuild request names, read with the user's profile and ref pattern. */
export const pullRequestOf = (
  request: OpenRequest,
  config: PrboxConfig
): Effect.Effect<PullRequestTarget, InvalidPullRequestInput> => {
  const parsed = parsePullRequestTarget(request.input, {
    ...(request.pr === undefined ? {} : { pr: request.pr }),
    ...(request.ref === undefined ? {} : { ref: request.ref }),
    ...(config.profile === undefined ? {} : { profile: config.profile }),
    refPattern: config.pullRequestRefPattern
  })
  return Result.isFailure(parsed)
    ? Effect.fail(new InvalidPullRequestInput({ reason: parsed.failure.message }))
    : Effect.succeed(parsed.success)
}
