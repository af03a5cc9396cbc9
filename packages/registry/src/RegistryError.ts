import { Schema } from "effect"

/**
 * Why a registry (or a tarball's server) did not give what was asked:
 * - `unreachable`: no connection, no answer in time, a broken transfer;
 * - `unauthorized`: 401/403 (the detail says whether credentials were used);
 * - `not-found`: 404 for the tag, digest or blob;
 * - `digest-mismatch`: bytes that do not hash to the digest that names them;
 * - `media-type`: a manifest or layer of another kind than asked;
 * - `too-large`: past the size cap;
 * - `refused`: a request prbox will not make (plain HTTP off loopback, a redirect to it);
 * - `protocol`: any other answer that cannot be used.
 */
export const RegistryFailure = Schema.Literals([
  "unreachable",
  "unauthorized",
  "not-found",
  "digest-mismatch",
  "media-type",
  "too-large",
  "refused",
  "protocol"
])
export type RegistryFailure = typeof RegistryFailure.Type

/**
 * A registry operation failed. `registry` is `host[:port]` (a tarball's
 * host), `reference` what was asked for. `detail` never holds a token, a
 * password or a credential helper's output.
 */
export class RegistryError extends Schema.TaggedError<RegistryError>()("RegistryError", {
  operation: Schema.String,
  registry: Schema.String,
  reference: Schema.String,
  reason: RegistryFailure,
  detail: Schema.String
}) {
  override get message() {
    return `${this.operation} ${this.reference} (registry ${this.registry}): ${this.detail}`
  }
}

/**
 * The user's Docker credentials for a registry could not be read: a
 * config.json that does not parse, a credential helper that is missing or
 * failed. Never "no credentials": a registry the config does not name has none.
 */
export class CredentialsUnavailable extends Schema.TaggedError<CredentialsUnavailable>()("CredentialsUnavailable", {
  operation: Schema.String,
  registry: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `${this.operation} for ${this.registry}: ${this.detail}`
  }
}
