import { Effect, Schema } from "effect"
import { RawLifecycleCommand } from "../Commands.ts"
import { RawMount } from "../Config.ts"
import type { DevcontainerError } from "../Errors.ts"
import { decodeWith, parseJsonc } from "../Parse.ts"

// devcontainer-feature.json, per the features spec. A feature is PR content
// too (the PR names it): decoded leniently (authors add their own keys), and
// what it asks for beyond its install is merged like an image label's entry,
// under the same policy.

const optionValue = Schema.Union([Schema.String, Schema.Boolean])

/** One option: its type and default (the rest is for editors). */
export const FeatureOption = Schema.Struct({
  type: Schema.optionalKey(Schema.Literals(["string", "boolean"])),
  default: Schema.optionalKey(optionValue),
  enum: Schema.optionalKey(Schema.Array(Schema.String)),
  proposals: Schema.optionalKey(Schema.Array(Schema.String)),
  description: Schema.optionalKey(Schema.String)
})

const lifecycle = Schema.optionalKey(RawLifecycleCommand)

export const FeatureMetadata = Schema.Struct({
  id: Schema.String,
  version: Schema.optionalKey(Schema.String),
  name: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  documentationURL: Schema.optionalKey(Schema.String),
  options: Schema.optionalKey(Schema.Record(Schema.String, FeatureOption)),
  containerEnv: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  privileged: Schema.optionalKey(Schema.Boolean),
  init: Schema.optionalKey(Schema.Boolean),
  capAdd: Schema.optionalKey(Schema.Array(Schema.String)),
  securityOpt: Schema.optionalKey(Schema.Array(Schema.String)),
  entrypoint: Schema.optionalKey(Schema.String),
  mounts: Schema.optionalKey(Schema.Array(RawMount)),
  customizations: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown)),
  dependsOn: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.Union([optionValue, Schema.Record(Schema.String, optionValue)]))
  ),
  installsAfter: Schema.optionalKey(Schema.Array(Schema.String)),
  legacyIds: Schema.optionalKey(Schema.Array(Schema.String)),
  deprecated: Schema.optionalKey(Schema.Boolean),
  onCreateCommand: lifecycle,
  updateContentCommand: lifecycle,
  postCreateCommand: lifecycle,
  postStartCommand: lifecycle,
  postAttachCommand: lifecycle
})
export type FeatureMetadata = typeof FeatureMetadata.Type

export const FEATURE_FILE = "devcontainer-feature.json"

/** A feature's devcontainer-feature.json (JSONC), decoded; `where` names the feature in errors. */
export const parseFeatureMetadata = (where: string, text: string): Effect.Effect<FeatureMetadata, DevcontainerError> =>
  Effect.flatMap(parseJsonc(where, text), (value) => decodeWith(FeatureMetadata)(where, value, false))

/**
 * What a feature contributes to the image's `devcontainer.metadata` label,
 * as the devcontainers CLI records it: its id and the properties that act on
 * the container (its containerEnv is baked into the image instead).
 */
export const labelEntry = (key: string, metadata: FeatureMetadata): Readonly<Record<string, unknown>> => {
  const picked: Record<string, unknown> = { id: key }
  for (const property of [
    "init",
    "privileged",
    "capAdd",
    "securityOpt",
    "entrypoint",
    "mounts",
    "customizations",
    "onCreateCommand",
    "updateContentCommand",
    "postCreateCommand",
    "postStartCommand",
    "postAttachCommand"
  ] as const) {
    if (metadata[property] !== undefined) picked[property] = metadata[property]
  }
  return picked
}
