import { Schema } from "effect"

/**
 * A feature could not be had: fetched, read or checked. Names the feature
 * (its key in devcontainer.json) and where it was asked for (a registry, a
 * URL's host, a folder); never a credential.
 */
export class FeatureUnavailable extends Schema.TaggedError<FeatureUnavailable>()("FeatureUnavailable", {
  feature: Schema.String,
  source: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `feature ${this.feature} (${this.source}): ${this.detail}`
  }
}
