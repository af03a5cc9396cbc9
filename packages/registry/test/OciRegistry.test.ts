import { readFileSync, writeFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startRegistry, testAuth } from "../../../scripts/testing/registry.ts"
import { blobPath, OCI_MANIFEST, publishFeature, pushManifest } from "../../../scripts/testing/registry-publish.ts"
import { OCI_INDEX, passwordCredentials } from "../src/index.ts"
import { failureOf, fetchFeature, helloFeature, publishHello, reference } from "./fixtures.ts"

// A real registry process (Debian's docker-registry) per test, on 127.0.0.1, real HTTP.

/** Replaces one byte of a stored blob, keeping its length: the registry serves it as it is on disk. */
const corrupt = (path: string, at: (bytes: Buffer) => number) => {
  const bytes = readFileSync(path)
  const index = at(bytes)
  bytes[index] = (bytes[index] ?? 0) ^ 0x01
  writeFileSync(path, bytes)
}

describe("fetchArtifact from a real registry", () => {
  it.live("anonymous: the layer as published, its digests and the manifest's annotations", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const published = yield* publishHello(registry)
      const artifact = yield* fetchFeature(reference(`${registry.host}/features/hello:1`))
      assert.strictEqual(artifact.manifestDigest, published.manifestDigest)
      assert.strictEqual(artifact.layerDigest, published.layerDigest)
      assert.deepStrictEqual(Buffer.from(artifact.bytes), Buffer.from(published.layer))
      const metadata = JSON.parse(artifact.annotations["dev.containers.metadata"] ?? "{}")
      assert.strictEqual(metadata.id, "hello")
    }).pipe(Effect.scoped)
  )

  it.live("behind htpasswd: the user's credentials fetch it; without them it is an error naming the registry", () =>
    Effect.gen(function* () {
      const auth = testAuth()
      const registry = yield* startRegistry({ auth })
      const published = yield* publishHello(registry)
      const ref = reference(`${registry.host}/features/hello:1`)
      const credentials = passwordCredentials(auth.user, auth.password)
      const artifact = yield* fetchFeature(ref, { credentials })
      assert.strictEqual(artifact.layerDigest, published.layerDigest)

      const anonymous = yield* failureOf(fetchFeature(ref))
      assert.strictEqual(anonymous.reason, "unauthorized")
      assert.strictEqual(anonymous.registry, registry.host)
      assert.include(anonymous.message, registry.host)
      assert.include(anonymous.message, "registryCredentials")

      const wrong = yield* failureOf(fetchFeature(ref, { credentials: passwordCredentials(auth.user, "not-it") }))
      assert.strictEqual(wrong.reason, "unauthorized")
      assert.include(wrong.detail, "refused the credentials")
      for (const error of [anonymous, wrong]) {
        assert.notInclude(JSON.stringify(error), auth.password)
        assert.notInclude(JSON.stringify(error), "not-it")
        assert.notInclude(error.message, "Basic ")
      }
    }).pipe(Effect.scoped)
  )

  it.live("a pin is fetched by digest: the tag moved on, the pinned version still comes", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const first = yield* publishHello(registry, "1")
      // The same folder under the same tag, its layer of another media type: another manifest.
      const second = yield* publishFeature(registry, {
        repository: "features/hello",
        tag: "1",
        folder: helloFeature,
        layerMediaType: "application/vnd.devcontainers.layer.v1+tar+moved"
      })
      assert.notStrictEqual(second.manifestDigest, first.manifestDigest)
      const ref = reference(`${registry.host}/features/hello:1`)
      const pinned = yield* fetchFeature(ref, { pinnedDigest: first.manifestDigest })
      assert.strictEqual(pinned.manifestDigest, first.manifestDigest)
      // The tag itself now names a manifest without the feature's layer.
      assert.strictEqual((yield* failureOf(fetchFeature(ref))).reason, "media-type")
    }).pipe(Effect.scoped)
  )

  it.live("a pinned digest the registry's answer does not hash to is refused", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const published = yield* publishHello(registry)
      const ref = reference(`${registry.host}/features/hello:1`)
      // The stored manifest altered on disk (still JSON, same length): the registry serves it under the pin.
      corrupt(blobPath(registry, published.manifestDigest), (bytes) => bytes.indexOf("Hello") + 1)
      const mismatch = yield* failureOf(fetchFeature(ref, { pinnedDigest: published.manifestDigest }))
      assert.strictEqual(mismatch.reason, "digest-mismatch")
      assert.include(mismatch.detail, published.manifestDigest)

      const unknown = `sha256:${"0".repeat(64)}`
      assert.strictEqual((yield* failureOf(fetchFeature(ref, { pinnedDigest: unknown }))).reason, "not-found")
      const conflicting = reference(`${registry.host}/features/hello:1@${unknown}`)
      const conflict = yield* failureOf(fetchFeature(conflicting, { pinnedDigest: published.manifestDigest }))
      assert.strictEqual(conflict.reason, "digest-mismatch")
    }).pipe(Effect.scoped)
  )

  it.live("a stored layer whose bytes do not hash to its digest is refused", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const published = yield* publishHello(registry)
      corrupt(blobPath(registry, published.layerDigest), (bytes) => bytes.length - 1)
      const error = yield* failureOf(fetchFeature(reference(`${registry.host}/features/hello:1`)))
      assert.strictEqual(error.reason, "digest-mismatch")
      assert.include(error.detail, published.layerDigest)
    }).pipe(Effect.scoped)
  )

  it.live("a stored layer longer than its descriptor says is refused", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const published = yield* publishHello(registry)
      const path = blobPath(registry, published.layerDigest)
      writeFileSync(path, Buffer.concat([readFileSync(path), Buffer.from("extra")]))
      const error = yield* failureOf(fetchFeature(reference(`${registry.host}/features/hello:1`)))
      assert.strictEqual(error.reason, "digest-mismatch")
    }).pipe(Effect.scoped)
  )

  it.live("a missing tag or repository is not-found", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      yield* publishHello(registry)
      const tag = yield* failureOf(fetchFeature(reference(`${registry.host}/features/hello:2`)))
      assert.strictEqual(tag.reason, "not-found")
      assert.include(tag.detail, "MANIFEST_UNKNOWN")
      const repository = yield* failureOf(fetchFeature(reference(`${registry.host}/features/absent:1`)))
      assert.strictEqual(repository.reason, "not-found")
    }).pipe(Effect.scoped)
  )

  it.live("an unreachable registry is an error naming it", () =>
    Effect.gen(function* () {
      // A registry started and stopped: nothing listens on its port any more.
      const host = yield* Effect.scoped(Effect.map(startRegistry(), (registry) => registry.host))
      const error = yield* failureOf(fetchFeature(reference(`${host}/features/hello:1`)))
      assert.strictEqual(error.reason, "unreachable")
      assert.strictEqual(error.registry, host)
      assert.include(error.message, host)
      assert.include(error.detail, "ECONNREFUSED")
    })
  )

  it.live("a layer over the cap is refused before it is fetched", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const published = yield* publishHello(registry)
      const ref = reference(`${registry.host}/features/hello:1`)
      const error = yield* failureOf(fetchFeature(ref, {}, { maxLayerBytes: published.layer.byteLength - 1 }))
      assert.strictEqual(error.reason, "too-large")
      const manifest = yield* failureOf(fetchFeature(ref, {}, { maxManifestBytes: 100 }))
      assert.strictEqual(manifest.reason, "too-large")
    }).pipe(Effect.scoped)
  )

  it.live("an image index is followed when it names one manifest, refused when it names several", () =>
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const one = yield* publishHello(registry, "1")
      const two = yield* publishFeature(registry, {
        repository: "features/hello",
        tag: "2",
        folder: helloFeature,
        layerMediaType: "application/vnd.devcontainers.layer.v1+tar+other"
      })
      const entry = (published: typeof one) => ({
        mediaType: OCI_MANIFEST,
        digest: published.manifestDigest,
        size: published.manifestSize
      })
      const single = yield* pushManifest(
        registry,
        "features/hello",
        "single",
        { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [entry(one)] },
        OCI_INDEX
      )
      const artifact = yield* fetchFeature(reference(`${registry.host}/features/hello:single`))
      assert.strictEqual(artifact.manifestDigest, single.digest)
      assert.strictEqual(artifact.layerDigest, one.layerDigest)

      yield* pushManifest(
        registry,
        "features/hello",
        "several",
        { schemaVersion: 2, mediaType: OCI_INDEX, manifests: [entry(one), entry(two)] },
        OCI_INDEX
      )
      const error = yield* failureOf(fetchFeature(reference(`${registry.host}/features/hello:several`)))
      assert.strictEqual(error.reason, "media-type")
      assert.include(error.detail, "2 manifests")
    }).pipe(Effect.scoped)
  )
})
