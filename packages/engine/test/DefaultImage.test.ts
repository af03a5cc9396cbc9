import { execFileSync, spawnSync } from "node:child_process"
import { assert, layer } from "@effect/vitest"
import { NodeDocker } from "@prbox/docker"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import * as NodeContainerRuntime from "../src/node/NodeContainerRuntime.ts"
import * as NodePlatform from "../src/node/NodePlatform.ts"
import { buildDefaultImage, DEFAULT_IMAGE } from "../src/node/tools/DefaultImage.ts"

const runtime = NodeContainerRuntime.layer.pipe(
  Layer.provide(NodeDocker.layer()),
  Layer.provideMerge(NodePlatform.layer)
)

/**
 * The warm path: the root filesystem archive `scripts/setup --with-test-images`
 * left in the cache (the code-server test image is made from it), imported.
 * The cold path (debootstrap, minutes) runs in that setup step.
 */
layer(runtime, { excludeTestServices: true })("buildDefaultImage", (it) => {
  it.effect(
    "imports the cached Debian root filesystem as DEFAULT_IMAGE, usable by any uid",
    () =>
      Effect.gen(function* () {
        spawnSync("docker", ["image", "rm", "--force", DEFAULT_IMAGE], { stdio: "ignore" })
        const lines: Array<string> = []
        const tag = yield* buildDefaultImage((line) => Effect.sync(() => void lines.push(line)))
        assert.strictEqual(tag, DEFAULT_IMAGE)
        assert.match(tag, /^prbox\/default:bookworm-[0-9a-f]{16}$/)
        assert.isTrue(
          lines.some((line) => /^Debian bookworm: using .*\/rootfs-[0-9a-f]{16}\.tar$/.test(line)),
          `the cached archive was not reused: ${lines.join("\n")}`
        )
        const [config] = JSON.parse(execFileSync("docker", ["image", "inspect", tag], { encoding: "utf8" })) as [
          { readonly Config: { readonly Env: ReadonlyArray<string>; readonly WorkingDir: string } }
        ]
        assert.strictEqual(config.Config.WorkingDir, "/workspace")
        assert.includeMembers([...config.Config.Env], ["HOME=/home/coder", "LANG=C.UTF-8", "SHELL=/bin/bash"])
        const tools = execFileSync(
          "docker",
          [
            "run",
            "--rm",
            "--label",
            `${TEST_RUN_LABEL}=${inject("testRunId")}`,
            "--user",
            "1000:1000",
            tag,
            "sh",
            "-c",
            "git --version && curl --version >/dev/null && command -v ssh less ps && touch $HOME/.probe && pwd"
          ],
          { encoding: "utf8" }
        )
        assert.match(tools, /^git version /)
        assert.match(tools, /\/workspace\n$/)
      }),
    180_000
  )
})
