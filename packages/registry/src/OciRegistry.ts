import type { OciReference } from "@prbox/domain"
import { Context, type Effect } from "effect"
import type { Credentials } from "./Credentials.ts"
import type { RegistryError } from "./RegistryError.ts"

export interface FetchArtifactOptions {
  /** The layer to take: exactly one of the manifest's layers must be of this media type. */
  readonly mediaType: string
  /**
   * `sha256:…` the reference must resolve to (a lock file's pin): the
   * manifest is then fetched by this digest and its bytes must hash to it.
   */
  readonly pinnedDigest?: string | undefined
  /** Used only on a 401 that asks for them; absent, the registry is asked anonymously only. */
  readonly credentials?: Credentials | undefined
}

export interface Artifact {
  /**
   * `sha256:…` of the document the reference resolves to, as fetched (an
   * image index's when the registry answered with one): the value to pin.
   */
  readonly manifestDigest: string
  /** `sha256:…` of the layer, checked against `bytes`. */
  readonly layerDigest: string
  /** The manifest's annotations (a feature's `dev.containers.metadata`); `{}` when it has none. */
  readonly annotations: Readonly<Record<string, string>>
  /** The layer's bytes, of the size and digest its descriptor states. */
  readonly bytes: Uint8Array
}

export interface Tarball {
  readonly bytes: Uint8Array
  /** `sha256:…` of `bytes`. */
  readonly digest: string
}

export interface OciRegistryShape {
  /**
   * One layer of an OCI artifact (a devcontainer feature): the manifest
   * (following an image index only when it names a single manifest), its
   * digest computed and checked against the reference's or `pinnedDigest`,
   * the layer of `mediaType` fetched and checked against its descriptor's
   * digest and size. Plain HTTP only to a loopback registry; sizes and time
   * are capped. Anonymous first; credentials only when given and asked for.
   */
  readonly fetchArtifact: (
    reference: OciReference,
    options: FetchArtifactOptions
  ) => Effect.Effect<Artifact, RegistryError>
  /**
   * A `https://…` tarball (a feature given by URL), redirects followed to
   * https only; plain HTTP only to this machine's loopback. Size and time
   * are capped. Never sends credentials.
   */
  readonly fetchTarball: (url: string) => Effect.Effect<Tarball, RegistryError>
}

/** OCI registries and feature tarballs over HTTP (node/NodeOciRegistry.ts on Node's fetch). */
export class OciRegistry extends Context.Service<OciRegistry, OciRegistryShape>()("prbox/registry/OciRegistry") {}
