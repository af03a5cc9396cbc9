import { randomBytes } from "node:crypto"
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Docker, NodeDocker } from "@prbox/docker"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { ContainerRuntime } from "../src/index.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"
import { healthzTag } from "./harness.ts"

const labels = () => ({ [TEST_RUN_LABEL]: inject("testRunId") })

/**
 * A volume holding what a prebuild's steps could leave: a file only its
 * owner reads, a file of another user, and a link naming a host path.
 */
const prebuildVolume = (hostPath: string) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    const name = `prbox-test-copy-${randomBytes(4).toString("hex")}`
    yield* docker.createVolume(name, labels())
    yield* Effect.addFinalizer(() => Effect.ignore(docker.removeVolume(name)))
    const seed = [
      "mkdir -p /v/deps && echo made > /v/deps/made && chmod 600 /v/deps/made && chown 1000:1000 /v/deps/made",
      "echo theirs > /v/deps/other && chown 1234:1234 /v/deps/other",
      `ln -s ${hostPath} /v/deps/escape && chown -h 1000:1000 /v/deps /v/deps/escape`
    ].join(" && ")
    const seeder = yield* docker.createContainer({
      name: `prbox-test-seed-${randomBytes(4).toString("hex")}`,
      image: healthzTag,
      entrypoint: ["/bin/sh", "-c", seed],
      env: {},
      labels: labels(),
      binds: [],
      volumes: [{ volume: name, containerPath: "/v", readOnly: false }],
      user: "0:0",
      exposedPort: 9,
      network: "none"
    })
    yield* Effect.addFinalizer(() => Effect.ignore(docker.remove(seeder.id, { force: true, volumes: false })))
    const since = new Date()
    yield* docker.start(seeder.id)
    // The seed's last command succeeds only once all before it did; its container then stops.
    yield* docker.awaitLogLine(seeder.id, { since, matches: () => false })
    const info = yield* docker.inspect(seeder.id)
    assert.strictEqual(info.state.exitCode, 0, "the volume was seeded")
    return name
  })

const folders = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "prbox-copy-"))
    const workspace = join(root, "workspace")
    const outside = join(root, "outside")
    mkdirSync(workspace)
    mkdirSync(outside)
    return { root, workspace, outside }
  }),
  ({ root }) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

layer(NodeContainerRuntime.layer.pipe(Layer.provideMerge(NodeDocker.layer()), Layer.provide(FetchHttpClient.layer)), {
  excludeTestServices: true,
  timeout: 120_000
})("a prebuild's files copied into a sandbox's folders by a container of its image", (it) => {
  it.effect("owners, modes and links come as they are, and the link is never followed here", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      yield* runtime.ensureImage(healthzTag, () => Effect.void)
      const { workspace, outside } = yield* folders
      const volume = yield* prebuildVolume(join(outside, "secret"))
      yield* runtime.copyIntoFolders(healthzTag, [{ volume, folder: workspace }], labels())
      const made = lstatSync(join(workspace, "deps/made"))
      assert.strictEqual(made.uid, 1000)
      assert.strictEqual(made.mode & 0o777, 0o600)
      assert.strictEqual(readFileSync(join(workspace, "deps/made"), "utf8"), "made\n")
      assert.strictEqual(lstatSync(join(workspace, "deps/other")).uid, 1234)
      assert.isTrue(lstatSync(join(workspace, "deps/escape")).isSymbolicLink())
      assert.strictEqual(readlinkSync(join(workspace, "deps/escape")), join(outside, "secret"))
      assert.deepStrictEqual(readdirSync(outside), [], "nothing written where the link points")
    })
  )

  it.effect(
    "a link a sandbox planted in its folder before the copy is resolved in the copying container, never on this machine",
    () =>
      Effect.gen(function* () {
        const runtime = yield* ContainerRuntime
        yield* runtime.ensureImage(healthzTag, () => Effect.void)
        const { workspace, outside } = yield* folders
        const volume = yield* prebuildVolume("/nowhere")
        // What the sandbox's own container, running beside the copy, could have made of its workspace:
        // the file the copy writes, a link to one of this machine's files.
        writeFileSync(join(outside, "target"), "host\n")
        mkdirSync(join(workspace, "deps"))
        symlinkSync(join(outside, "target"), join(workspace, "deps/made"))
        yield* Effect.ignore(runtime.copyIntoFolders(healthzTag, [{ volume, folder: workspace }], labels()))
        assert.strictEqual(readFileSync(join(outside, "target"), "utf8"), "host\n", "this machine's file is untouched")
        assert.deepStrictEqual(readdirSync(outside), ["target"])
      })
  )
})
