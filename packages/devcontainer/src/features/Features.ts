import { Effect } from "effect"
import type { DevcontainerConfig } from "../Config.ts"
import { DevcontainerError } from "../Errors.ts"
import type { FeatureValue } from "./FeatureOptions.ts"
import { type FeatureReference, parseFeatureReference } from "./FeatureReference.ts"

/** A feature devcontainer.json asks for: where it comes from and the options it sets. */
export interface RequestedFeature {
  readonly reference: FeatureReference
  readonly value: FeatureValue
}

const isValue = (value: unknown): value is FeatureValue =>
  typeof value === "string" ||
  typeof value === "boolean" ||
  (typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    Object.values(value).every((option) => typeof option === "string" || typeof option === "boolean"))

/**
 * devcontainer.json's `features`, each key a reference prbox can fetch and
 * each value options it can pass; the first that is not fails the read,
 * naming the key (a feature's key is the repository's own text, not a secret).
 */
export const requestedFeatures = (
  file: string,
  config: DevcontainerConfig
): Effect.Effect<ReadonlyArray<RequestedFeature>, DevcontainerError> =>
  Effect.forEach(Object.entries(config.features ?? {}), ([key, value]) => {
    const property = `features[${JSON.stringify(key)}]`
    const parsed = parseFeatureReference(key, file)
    if (!parsed.ok) return Effect.fail(new DevcontainerError({ file, property, detail: parsed.detail }))
    if (!isValue(value)) {
      return Effect.fail(
        new DevcontainerError({
          file,
          property,
          detail: "expected true, a version string or an object of string and boolean options"
        })
      )
    }
    return Effect.succeed({ reference: parsed.reference, value })
  })
