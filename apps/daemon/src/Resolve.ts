import type { Sandbox } from "@prbox/domain"
import { isLive } from "@prbox/domain"
import type { ConfigShape, SandboxServiceShape } from "@prbox/engine"
import { parsePullRequestTarget } from "@prbox/git"
import { Ambiguous, type ApiError, InvalidPrRef, NotFound } from "@prbox/protocol"
import { Effect, Result } from "effect"
import { api } from "./Mapping.ts"

/** What an id prefix looks like: ids are 12 lowercase base-32 characters. */
const ID_PREFIX = /^[a-z0-9]{1,12}$/

const listIds = (rows: ReadonlyArray<Sandbox>) => {
  const ids = rows.slice(0, 5).map((row) => row.id)
  return rows.length > 5 ? `${ids.join(", ")}, …` : ids.join(", ")
}

/**
 * A sandbox named by a unique id prefix, or by its pull request (the live
 * sandbox of the PR, else its newest one).
 */
export const resolve = (
  sandboxes: SandboxServiceShape,
  config: ConfigShape,
  query: string,
  pr: number | undefined
): Effect.Effect<Sandbox, ApiError> =>
  Effect.gen(function* () {
    const rows = yield* api(sandboxes.listAll)
    if (pr === undefined && ID_PREFIX.test(query)) {
      const matches = rows.filter((row) => row.id.startsWith(query))
      const [only] = matches
      if (only === undefined) return yield* new NotFound({ message: `no sandbox id starts with ${query}` })
      if (matches.length > 1) {
        return yield* new Ambiguous({
          message: `${query} matches ${matches.length} sandboxes (${listIds(matches)}); type more of the id`
        })
      }
      return only
    }
    const cfg = yield* api(config.load)
    const parsed = parsePullRequestTarget(query, {
      ...(pr === undefined ? {} : { pr }),
      ...(cfg.profile === undefined ? {} : { profile: cfg.profile }),
      refPattern: cfg.pullRequestRefPattern
    })
    if (Result.isFailure(parsed)) return yield* new InvalidPrRef({ message: parsed.failure.message })
    const ref = parsed.success
    const ofPr = rows.filter(
      (row) =>
        row.provider === ref.provider &&
        (row.host === ref.host || row.host === null) &&
        row.repository === ref.repository &&
        row.pullRequest === ref.pullRequest
    )
    const live = ofPr.filter(isLive)
    const [first] = live
    if (first !== undefined) {
      if (live.length > 1) {
        return yield* new Ambiguous({
          message: `${live.length} live sandboxes belong to that pull request (${listIds(live)}); name one by id`
        })
      }
      return first
    }
    const [newest] = ofPr
    if (newest === undefined) {
      return yield* new NotFound({ message: `no sandbox for ${ref.repository}#${ref.pullRequest}` })
    }
    return newest
  })
