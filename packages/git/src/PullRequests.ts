import type { PullRequestLookup } from "@prbox/domain"
import { Context, Effect, Layer } from "effect"
import type { PullRequestRef } from "./PullRequestRef.ts"

/** Which pull request to ask its hosting service about (CodeCommit's `host` is its region). */
export type PullRequestLocation = Pick<PullRequestRef, "provider" | "host" | "repository" | "pullRequest" | "profile">

export interface PullRequestsShape {
  /**
   * What the hosting service says of the pull request, with the user's own
   * credentials (never stored). Bounded in time and cached per pull request
   * for a minute; never fails: a service that cannot answer is `Unknown`.
   */
  readonly lookup: (at: PullRequestLocation) => Effect.Effect<PullRequestLookup>
}

export class PullRequests extends Context.Service<PullRequests, PullRequestsShape>()("prbox/git/PullRequests") {
  /** A service that never answers: every pull request's metadata is unknown. */
  static readonly unavailable = Layer.succeed(
    PullRequests,
    PullRequests.of({ lookup: () => Effect.succeed({ _tag: "Unknown", reason: "no hosting service is asked" }) })
  )

  /** Fixed answers, for tests standing in for a hosting service. */
  static readonly layerStatic = (answer: (at: PullRequestLocation) => PullRequestLookup) =>
    Layer.succeed(PullRequests, PullRequests.of({ lookup: (at) => Effect.sync(() => answer(at)) }))
}
