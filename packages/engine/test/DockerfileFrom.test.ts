import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startRegistry } from "../../../scripts/testing/registry.ts"
import { pushImage } from "../../../scripts/testing/registry-publish.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { healthzTag, openSettled, withEngine } from "./harness.ts"

// A PR's Dockerfile is held to the rule its image and features are: an image
// on a registry on this machine (a real docker-registry process on loopback)
// is pulled by the build only when config.json's localRegistries lists it,
// checked before the build starts, for every stage and through ARGs.

const present = (image: string): boolean => {
  try {
    execFileSync("docker", ["image", "inspect", image], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

describe("a PR's Dockerfile FROM a registry on this machine", () => {
  it.live(
    "not listed: refused before the build, naming the image and localRegistries (nothing pulled); listed: built",
    () =>
      Effect.gen(function* () {
        const registry = yield* startRegistry()
        const image = yield* Effect.acquireRelease(
          pushImage(registry, healthzTag, "prbox-test/dockerfile-base", randomBytes(4).toString("hex")),
          (ref) => Effect.sync(() => execFileSync("docker", ["rmi", "--force", ref], { stdio: "ignore" }))
        )
        const path = image.slice(registry.host.length + 1)
        // The registry comes from a build arg into a global ARG, in the second of three stages.
        const files = {
          ".devcontainer/devcontainer.json": JSON.stringify({
            build: { dockerfile: "Dockerfile", args: { REGISTRY: registry.host } }
          }),
          ".devcontainer/Dockerfile": `ARG REGISTRY=localhost:1\nFROM ${healthzTag} AS first\nFROM \${REGISTRY}/${path} AS base\nFROM base\n`
        }
        const open = (pr: number, localRegistries: ReadonlyArray<string>) =>
          withEngine({ config: { image: healthzTag, localRegistries } }, ({ remote }) =>
            Effect.gen(function* () {
              pushPullRequest(remote.path, pr, files)
              return yield* openSettled(remote.path, pr)
            })
          )

        const refused = yield* open(61, [])
        assert.strictEqual(refused.status, "error")
        assert.include(
          refused.error,
          `.devcontainer/Dockerfile: image ${image}: ${registry.host} is on this machine: a pull request's features and images come from it only when config.json's localRegistries lists it`
        )
        assert.isNull(refused.containerId)
        assert.isFalse(present(image), "the build never ran: the image was not pulled")

        const built = yield* open(62, [registry.host])
        assert.strictEqual(built.status, "running", built.error ?? "")
        assert.isTrue(present(image))
      }).pipe(Effect.scoped),
    600_000
  )
})
