import { execFileSync, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Docker, NodeDocker } from "../src/index.ts"

/** A directory removed when the test's scope closes. */
const scopedDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-import-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A tag under prbox-test/ whose image is removed when the test's scope closes. */
const scopedTag = (name: string) =>
  Effect.acquireRelease(
    Effect.sync(() => `prbox-test/${name}:${randomBytes(4).toString("hex")}`),
    (tag) => Effect.sync(() => spawnSync("docker", ["rmi", "-f", tag], { stdio: "ignore" }))
  )

/** A root filesystem archive holding one file, `/hello.txt`. */
const tinyRootfs = Effect.gen(function* () {
  const dir = yield* scopedDir
  const root = join(dir, "root")
  execFileSync("mkdir", ["-p", root])
  writeFileSync(join(root, "hello.txt"), "hello\n")
  const archive = join(dir, "rootfs.tar")
  execFileSync("tar", ["-cf", archive, "-C", root, "."])
  return archive
})

layer(NodeDocker.layer(), { excludeTestServices: true })("NodeDocker image import against the local engine", (it) => {
  it.effect("imports a root filesystem with Dockerfile changes that imageInfo reports", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const archivePath = yield* tinyRootfs
      const tag = yield* scopedTag("import")
      const lines: Array<string> = []
      yield* docker.importImage(
        {
          archivePath,
          tag,
          changes: [
            'ENV GREETING="hello world"',
            "ENV EMPTY=",
            'LABEL dev.prbox.test="yes" other=2',
            "USER 1000:1000",
            "WORKDIR /srv"
          ]
        },
        (line) => lines.push(line)
      )
      assert.isAbove(lines.length, 0, "no progress line")

      const info = yield* docker.imageInfo(tag)
      assert.isDefined(info)
      assert.match(info?.id ?? "", /^sha256:[0-9a-f]{64}$/)
      assert.strictEqual(info?.digest, null, "never pulled: no repository digest")
      assert.strictEqual(info?.env.GREETING, "hello world")
      assert.strictEqual(info?.env.EMPTY, "")
      assert.deepStrictEqual(info?.labels, { "dev.prbox.test": "yes", other: "2" })
      assert.strictEqual(info?.user, "1000:1000")
      assert.strictEqual(info?.os, "linux")
      assert.isAbove(info?.architecture.length ?? 0, 0)

      assert.isUndefined(yield* docker.imageInfo(`prbox-test/missing:${randomBytes(4).toString("hex")}`))
    })
  )

  it.effect("fails, leaving no tag, on a change import refuses and on a missing archive", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const archivePath = yield* tinyRootfs
      const tag = yield* scopedTag("import-refused")

      const refused = yield* Effect.flip(docker.importImage({ archivePath, tag, changes: ["FROM scratch"] }, () => {}))
      assert.strictEqual(refused._tag, "DockerEngineError")
      assert.match(refused.message, /^image\.import: .*from/i)
      assert.isFalse(yield* docker.imageExists(tag))

      const missing = join(archivePath, "..", "absent.tar")
      const unreadable = yield* Effect.flip(docker.importImage({ archivePath: missing, tag, changes: [] }, () => {}))
      assert.strictEqual(unreadable._tag, "DockerEngineError")
      assert.include(unreadable.message, "absent.tar")
      assert.isFalse(yield* docker.imageExists(tag))
    })
  )
})
