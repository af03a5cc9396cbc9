import { fileURLToPath } from "node:url"
import { type OciReference, parseOciReference } from "@prbox/domain"
import { Effect, Result } from "effect"
import type { TestRegistry } from "../../../scripts/testing/registry.ts"
import { publishFeature } from "../../../scripts/testing/registry-publish.ts"
import {
  DEVCONTAINERS_LAYER,
  type FetchArtifactOptions,
  NodeOciRegistry,
  OciRegistry,
  type RegistryError
} from "../src/index.ts"

/** A feature folder of our own (devcontainer-feature.json and install.sh). */
export const helloFeature = fileURLToPath(new URL("./fixtures/hello/", import.meta.url))

export const reference = (text: string): OciReference => Result.getOrThrow(parseOciReference(text))

/** Publishes the hello feature as `<registry>/features/hello:<tag>`. */
export const publishHello = (registry: TestRegistry, tag = "1", repository = "features/hello") =>
  publishFeature(registry, { repository, tag, folder: helloFeature })

/** fetchArtifact of a feature's layer on the Node implementation (caps given by `options`). */
export const fetchFeature = (
  ref: OciReference,
  options: Omit<FetchArtifactOptions, "mediaType"> = {},
  limits: NodeOciRegistry.Options = {}
) =>
  Effect.flatMap(OciRegistry, (oci) => oci.fetchArtifact(ref, { mediaType: DEVCONTAINERS_LAYER, ...options })).pipe(
    Effect.provide(NodeOciRegistry.layer(limits))
  )

/** The failure of `effect`, which must fail with a RegistryError. */
export const failureOf = <A>(effect: Effect.Effect<A, RegistryError>) =>
  Effect.flatMap(Effect.result(effect), (result) =>
    Result.isFailure(result) ? Effect.succeed(result.failure) : Effect.die(new Error("expected a RegistryError"))
  )
