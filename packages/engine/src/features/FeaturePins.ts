import { Settings } from "@prbox/store"
import { Context, Effect, Layer, Schema } from "effect"
import { FeatureUnavailable } from "./Errors.ts"

// prbox's own pins: the digests a repository's features were installed from,
// kept in prbox's state (the store's settings), never in the workspace. A
// later open of the same repository and devcontainer.json asking for the same
// features, without a devcontainer-lock.json, installs those digests again:
// a tag moved on the registry does not silently change a known repository's
// environment. A pin is refreshed (the tags resolved afresh and pinned again)
// when the features asked for change, or when it is older than PIN_MAX_AGE_MS.
// A lock file in the PR governs instead, and prbox then keeps no pin.

/** How long prbox's pins hold: after this the tags are resolved again (a moved tag is then taken, and pinned). */
export const PIN_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000

const Recorded = Schema.Struct({
  /** The feature keys devcontainer.json asked for, sorted: the pins hold only for the same set. */
  requested: Schema.Array(Schema.String),
  /** Each feature's key (dependencies included) → the digest installed. */
  pins: Schema.Record(Schema.String, Schema.String),
  /** When the tags were resolved (ms since the epoch). */
  pinnedAt: Schema.Number
})
export type RecordedPins = typeof Recorded.Type

/** The pins an open installs from: a recording that still holds for `requested` at `now`, else none. */
export const pinsToReuse = (
  recorded: RecordedPins | undefined,
  requested: ReadonlyArray<string>,
  now: number
): RecordedPins | undefined => {
  if (recorded === undefined || now - recorded.pinnedAt >= PIN_MAX_AGE_MS || now < recorded.pinnedAt) return undefined
  const wanted = [...requested].sort()
  const same = wanted.length === recorded.requested.length && wanted.every((key, i) => key === recorded.requested[i])
  return same ? recorded : undefined
}

/** The settings key of a repository's devcontainer.json: `host/owner/name` and its path. */
const keyOf = (scope: string): string => `featurePins ${scope}`

const decode = Schema.decodeUnknownEffect(Schema.fromJsonString(Recorded))

/** prbox's own feature pins per repository and devcontainer.json (`scope`), in its state. */
export class FeaturePins extends Context.Service<
  FeaturePins,
  {
    readonly recall: (scope: string) => Effect.Effect<RecordedPins | undefined, FeatureUnavailable>
    readonly record: (scope: string, pins: RecordedPins) => Effect.Effect<void, FeatureUnavailable>
  }
>()("prbox/engine/FeaturePins") {
  static readonly layer = Layer.effect(
    FeaturePins,
    Effect.gen(function* () {
      const settings = yield* Settings
      // prbox's own state: a pin it cannot read is an error, never "no pin" (that would take a moved tag).
      const failed = (scope: string) => (error: { readonly message: string }) =>
        new FeatureUnavailable({ feature: "prbox's pins", source: scope, detail: error.message })
      return FeaturePins.of({
        recall: (scope) =>
          settings.get(keyOf(scope)).pipe(
            Effect.flatMap((text) => (text === undefined ? Effect.succeed(undefined) : decode(text))),
            Effect.mapError(failed(scope))
          ),
        record: (scope, pins) => settings.set(keyOf(scope), JSON.stringify(pins)).pipe(Effect.mapError(failed(scope)))
      })
    })
  )
}
