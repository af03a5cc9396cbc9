import { execFileSync } from "node:child_process"
import { createServer } from "node:http"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pushPullRequest } from "../../git/test/helpers.ts"
import { publishFeature, tarFolder } from "../../../scripts/testing/registry-publish.ts"
import { startRegistry, type TestRegistry } from "../../../scripts/testing/registry.ts"
import { DefaultImage } from "../src/node/index.ts"
import { healthzTag, inspectContainer, openSettled, withEngine } from "./harness.ts"

/**
 * devcontainer features installed for real: published into a real registry
 * process on loopback (Debian's docker-registry), a .tgz served over
 * loopback HTTP, and local folders in the PR; installed by an image build on
 * the real engine and checked inside the running container.
 */
const base = DefaultImage.DEFAULT_IMAGE

const inContainer = (containerId: string, script: string): string =>
  execFileSync("docker", ["exec", containerId, "sh", "-c", script], { encoding: "utf8" }).trim()

/** A feature folder: its metadata and an install.sh that appends `<id> <OPTION>` to /etc/feature-order. */
const featureFolder = (root: string, metadata: Record<string, unknown>, option = "GREETING"): string => {
  const folder = join(root, String(metadata.id))
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, "devcontainer-feature.json"), JSON.stringify(metadata))
  writeFileSync(
    join(folder, "install.sh"),
    `#!/bin/sh\nset -e\necho "${String(metadata.id)} \${${option}:-} \${_REMOTE_USER}" >> /etc/feature-order\n`
  )
  return folder
}

const withFeatures = <A, E>(body: (registry: TestRegistry, root: string) => Effect.Effect<A, E>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const registry = yield* startRegistry()
      const root = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-features-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      return yield* body(registry, root)
    })
  )

describe("devcontainer features", () => {
  it.live(
    "OCI features from a registry with dependsOn, installsAfter and options, a local feature, in the spec's order; recorded with their digests and in the image's label",
    () =>
      withFeatures((registry, root) =>
        withEngine({ config: { image: healthzTag } }, ({ remote }) =>
          Effect.gen(function* () {
            const utils = yield* publishFeature(registry, {
              repository: "features/utils",
              tag: "1",
              folder: featureFolder(root, { id: "utils", version: "1.0.0" })
            })
            yield* publishFeature(registry, {
              repository: "features/lang",
              tag: "2",
              folder: featureFolder(root, {
                id: "lang",
                version: "2.1.0",
                options: { version: { type: "string", default: "lts" } },
                containerEnv: { LANG_HOME: "/opt/lang", PATH: "/opt/lang/bin:${PATH}" },
                dependsOn: { [`${registry.host}/features/utils:1`]: {} },
                customizations: { vscode: { settings: { "lang.enabled": true } } },
                postCreateCommand: "echo from-feature > /tmp/feature-step"
              }, "VERSION")
            })
            yield* publishFeature(registry, {
              repository: "features/lint",
              tag: "1",
              folder: featureFolder(root, { id: "lint", installsAfter: [`${registry.host}/features/lang`] })
            })
            pushPullRequest(remote.path, 31, {
              ".devcontainer/devcontainer.json": JSON.stringify({
                image: base,
                features: {
                  [`${registry.host}/features/lint:1`]: {},
                  [`${registry.host}/features/lang:2`]: "20",
                  "./hello": { greeting: "it's me" }
                },
                postCreateCommand: "echo from-json > /tmp/json-step"
              }),
              ".devcontainer/hello/devcontainer-feature.json": JSON.stringify({
                id: "hello",
                options: { greeting: { type: "string", default: "hi" } }
              }),
              ".devcontainer/hello/install.sh": `#!/bin/sh\necho "hello $GREETING" >> /etc/feature-order\n`
            })
            const row = yield* openSettled(remote.path, 31)
            assert.strictEqual(row.status, "running", row.error ?? "")
            assert.isNull(row.setupError)
            const id = row.containerId ?? assert.fail("no container")
            // utils before lang (dependsOn); lint after lang (installsAfter); hello has no constraint: the rounds sort it in.
            const order = inContainer(id, "cat /etc/feature-order").split("\n")
            assert.isBelow(order.findIndex((line) => line.startsWith("utils")), order.findIndex((line) => line.startsWith("lang")))
            assert.isBelow(order.findIndex((line) => line.startsWith("lang")), order.findIndex((line) => line.startsWith("lint")))
            assert.include(order, "hello it's me")
            assert.include(order.find((line) => line.startsWith("lang")), "lang 20 ")
            assert.strictEqual(inContainer(id, "printenv LANG_HOME"), "/opt/lang")
            assert.match(inContainer(id, "printenv PATH"), /^\/opt\/lang\/bin:/)
            // The feature's lifecycle command ran, before devcontainer.json's.
            assert.strictEqual(inContainer(id, "cat /tmp/feature-step /tmp/json-step"), "from-feature\nfrom-json")
            const features = row.environment?.features ?? []
            assert.deepInclude(features, { key: "./hello", digest: null })
            assert.strictEqual(features.length, 4)
            assert.deepInclude(features, { key: `${registry.host}/features/utils:1`, digest: utils.manifestDigest })
            const label = execFileSync("docker", ["image", "inspect", "-f", "{{index .Config.Labels \"devcontainer.metadata\"}}", row.environment?.image ?? ""], { encoding: "utf8" })
            assert.include(label, `"id":"${registry.host}/features/lang:2"`)
          })
        )
      ),
    600_000
  )
})
