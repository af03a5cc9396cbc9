import { Effect } from "effect"
import type { DevcontainerConfig } from "../Config.ts"
import { DevcontainerError } from "../Errors.ts"
import { mapDeprecatedFeatures } from "./DeprecatedFeatures.ts"
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
 * A deprecated short id is read under `featuresRegistry` (DeprecatedFeatures.ts).
 */
export const requestedFeatures = (
  file: string,
  config: DevcontainerConfig,
  featuresRegistry?: string,
  warn: (warning: string) => void = () => undefined
): Effect.Effect<ReadonlyArray<RequestedFeature>, DevcontainerError> =>
  Effect.flatMap(mapDeprecatedFeatures(file, config.features ?? {}, featuresRegistry, warn), (features) =>
    Effect.forEach(Object.entries(features), ([key, value]) => entry(file, key, value))
  )

const entry = (file: string, key: string, value: unknown): Effect.Effect<RequestedFeature, DevcontainerError> => {
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
}
