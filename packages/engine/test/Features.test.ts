import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { startRegistry, type TestRegistry } from "../../../scripts/testing/registry.ts"
import { publishFeature, tarFolder } from "../../../scripts/testing/registry-publish.ts"
import { pushPullRequest } from "../../git/test/helpers.ts"
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

const withFeatures = <A, E>(body: (registry: TestRegistry, root: string) => Effect.Effect<A, E, Scope.Scope>) =>
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
        withEngine({ config: { image: healthzTag, localRegistries: [registry.host] } }, ({ remote }) =>
          Effect.gen(function* () {
            const utils = yield* publishFeature(registry, {
              repository: "features/utils",
              tag: "1",
              folder: featureFolder(root, { id: "utils", version: "1.0.0" })
            })
            yield* publishFeature(registry, {
              repository: "features/lang",
              tag: "2",
              folder: featureFolder(
                root,
                {
                  id: "lang",
                  version: "2.1.0",
                  options: { version: { type: "string", default: "lts" } },
                  containerEnv: { LANG_HOME: "/opt/lang", PATH: "/opt/lang/bin:${PATH}" },
                  dependsOn: { [`${registry.host}/features/utils:1`]: {} },
                  customizations: { vscode: { settings: { "lang.enabled": true } } },
                  postCreateCommand: "echo from-feature > /tmp/feature-step"
                },
                "VERSION"
              )
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
            assert.isBelow(
              order.findIndex((line) => line.startsWith("utils")),
              order.findIndex((line) => line.startsWith("lang"))
            )
            assert.isBelow(
              order.findIndex((line) => line.startsWith("lang")),
              order.findIndex((line) => line.startsWith("lint"))
            )
            assert.include(order, "hello it's me")
            assert.include(
              order.find((line) => line.startsWith("lang")),
              "lang 20 "
            )
            assert.strictEqual(inContainer(id, "printenv LANG_HOME"), "/opt/lang")
            assert.match(inContainer(id, "printenv PATH"), /^\/opt\/lang\/bin:/)
            // The feature's lifecycle command ran, before devcontainer.json's.
            assert.strictEqual(inContainer(id, "cat /tmp/feature-step /tmp/json-step"), "from-feature\nfrom-json")
            const features = row.environment?.features ?? []
            assert.deepInclude(features, { key: "./hello", digest: null })
            assert.strictEqual(features.length, 4)
            assert.deepInclude(features, { key: `${registry.host}/features/utils:1`, digest: utils.manifestDigest })
            const label = execFileSync(
              "docker",
              [
                "image",
                "inspect",
                "-f",
                '{{index .Config.Labels "devcontainer.metadata"}}',
                row.environment?.image ?? ""
              ],
              { encoding: "utf8" }
            )
            assert.include(label, `"id":"${registry.host}/features/lang:2"`)
          })
        )
      ),
    600_000
  )

  it.live(
    "a .tgz over HTTP; a pin that does not match, an unreachable registry and a registry on this machine the user did not list (for a feature or the image) each fail the open, naming the feature and the source",
    () =>
      withFeatures((registry, root) =>
        Effect.gen(function* () {
          const tgz = gzipSync(tarFolder(featureFolder(root, { id: "served" })))
          const server = yield* Effect.acquireRelease(
            Effect.callback<ReturnType<typeof createServer>>((resume) => {
              const listening = createServer((_, response) => response.end(tgz)).listen(0, "127.0.0.1", () =>
                resume(Effect.succeed(listening))
              )
            }),
            (closing) => Effect.sync(() => closing.close())
          )
          const address = server.address()
          const served = `127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
          yield* publishFeature(registry, {
            repository: "features/pinned",
            tag: "1",
            folder: featureFolder(root, { id: "pinned" })
          })
          const open = (pr: number, localRegistries: ReadonlyArray<string>, files: Record<string, string>) =>
            withEngine({ config: { image: healthzTag, localRegistries } }, ({ remote }) =>
              Effect.gen(function* () {
                pushPullRequest(remote.path, pr, files)
                const row = yield* openSettled(remote.path, pr)
                // Read before the engine's teardown removes the container.
                const installed = row.containerId === null ? "" : inContainer(row.containerId, "cat /etc/feature-order")
                return { ...row, installed }
              })
            )
          const json = (features: Record<string, unknown>) => JSON.stringify({ image: base, features })
          const ok = yield* open(41, [served], {
            ".devcontainer/devcontainer.json": json({ [`http://${served}/devcontainer-feature-served.tgz`]: {} })
          })
          assert.strictEqual(ok.status, "running", ok.error ?? "")
          assert.include(ok.installed, "served")
          assert.match(ok.environment?.features?.[0]?.digest ?? "", /^sha256:/)

          const key = `${registry.host}/features/pinned:1`
          const pinned = yield* open(42, [registry.host], {
            ".devcontainer/devcontainer.json": json({ [key]: {} }),
            ".devcontainer/devcontainer-lock.json": JSON.stringify({
              features: { [key]: { integrity: `sha256:${"0".repeat(64)}` } }
            })
          })
          assert.strictEqual(pinned.status, "error")
          assert.include(pinned.error, `feature ${key} (${registry.host})`)
          assert.isNull(pinned.containerId)

          const closed = yield* open(43, ["localhost:9"], {
            ".devcontainer/devcontainer.json": json({ "localhost:9/features/gone:1": {} })
          })
          assert.strictEqual(closed.status, "error")
          assert.include(closed.error, "feature localhost:9/features/gone:1 (localhost:9)")

          const unlisted = yield* open(44, [], { ".devcontainer/devcontainer.json": json({ [key]: {} }) })
          assert.strictEqual(unlisted.status, "error")
          assert.include(unlisted.error, "localRegistries")

          // The same rule for the PR's image: a registry on this machine, not listed, is never asked.
          const image = yield* open(45, [], {
            ".devcontainer/devcontainer.json": JSON.stringify({ image: `${registry.host}/images/base:1` })
          })
          assert.strictEqual(image.status, "error")
          assert.include(image.error, `image ${registry.host}/images/base:1: ${registry.host} is on this machine`)
        })
      ),
    600_000
  )

  it.live(
    "a feature's widening is left out for an untrusted repository; the same feature set on the same image is built once, for every PR",
    () =>
      withFeatures((registry, root) =>
        withEngine({ config: { image: healthzTag, localRegistries: [registry.host] } }, ({ remote }) =>
          Effect.gen(function* () {
            yield* publishFeature(registry, {
              repository: "features/dind",
              tag: "1",
              folder: featureFolder(root, { id: "dind", privileged: true, capAdd: ["SYS_ADMIN"], init: true })
            })
            const devcontainer = JSON.stringify({ image: base, features: { [`${registry.host}/features/dind:1`]: {} } })
            pushPullRequest(remote.path, 51, { ".devcontainer/devcontainer.json": devcontainer })
            pushPullRequest(remote.path, 52, { ".devcontainer/devcontainer.json": devcontainer, "other.txt": "x" })
            const first = yield* openSettled(remote.path, 51)
            const second = yield* openSettled(remote.path, 52)
            assert.strictEqual(first.status, "running", first.error ?? "")
            assert.strictEqual(second.status, "running", second.error ?? "")
            assert.strictEqual(first.environment?.image, second.environment?.image)
            const id = first.containerId ?? assert.fail("no container")
            assert.strictEqual(
              execFileSync("docker", ["inspect", "-f", "{{.HostConfig.Privileged}}", id], { encoding: "utf8" }).trim(),
              "false"
            )
            assert.notInclude(inspectContainer(id).HostConfig.CapAdd ?? [], "SYS_ADMIN")
          })
        )
      ),
    600_000
  )
})
