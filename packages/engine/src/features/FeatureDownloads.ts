import type { FeatureReference } from "@prbox/devcontainer"
import { Context, type Effect } from "effect"
import type { FeatureUnavailable } from "./Errors.ts"

/** A feature's archive as fetched: a tar (a .tgz arrives decompressed), and the digest it was checked against. */
export interface FeatureArchive {
  /** OCI: the manifest's digest; a tarball: the sha256 of the file as downloaded. `sha256:…`. */
  readonly digest: string
  readonly tar: Uint8Array
}

/**
 * Where features are fetched from: an OCI registry (the layer of media type
 * `application/vnd.devcontainers.layer.v1+tar`, digests checked) or an
 * https tarball. `pinned` (a lock file's or prbox's own pin) must match.
 * A registry is asked with the user's credentials only when config.json's
 * `registryCredentials` lists it; anonymously otherwise.
 */
export class FeatureDownloads extends Context.Service<
  FeatureDownloads,
  {
    readonly fetch: (
      reference: Exclude<FeatureReference, { readonly _tag: "Local" }>,
      pinned: string | undefined
    ) => Effect.Effect<FeatureArchive, FeatureUnavailable>
  }
>()("prbox/engine/FeatureDownloads") {}
