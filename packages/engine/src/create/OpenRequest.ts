import {
  type ParseOptions,
  type PrebuildTarget,
  type PullRequestTarget,
  parsePrebuildTarget,
  parsePullRequestTarget
} from "@prbox/git"
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

const parseOptionsOf = (request: OpenRequest, config: PrboxConfig): ParseOptions => ({
  ...(request.pr === undefined ? {} : { pr: request.pr }),
  ...(request.ref === undefined ? {} : { ref: request.ref }),
  ...(config.profile === undefined ? {} : { profile: config.profile }),
  refPattern: config.pullRequestRefPattern
})

const settled = <A>(parsed: Result.Result<A, { readonly message: string }>) =>
  Result.isFailure(parsed)
    ? Effect.fail(new InvalidPullRequestInput({ reason: parsed.failure.message }))
    : Effect.succeed(parsed.success)

/** The PR an open request names, read with the user's profile and ref pattern. */
export const pullRequestOf = (
  request: OpenRequest,
  config: PrboxConfig
): Effect.Effect<PullRequestTarget, InvalidPullRequestInput> =>
  settled(parsePullRequestTarget(request.input, parseOptionsOf(request, config)))

/** What a prebuild request names: a PR (as an open's), or a repository without one (its default branch). */
export const prebuildTargetOf = (
  request: OpenRequest,
  config: PrboxConfig
): Effect.Effect<PrebuildTarget, InvalidPullRequestInput> =>
  settled(parsePrebuildTarget(request.input, parseOptionsOf(request, config)))
