import { execFileSync, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Docker, NodeDocker } from "../src/index.ts"

// Save and load against the local engine; copies to a real remote engine are
// tested where they are used (packages/engine/test/ImageTransfer.test.ts).

/** A tiny image under prbox-test/ made by `docker import`, removed when the test's scope closes. */
const scopedImage = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "prbox-save-"))
    writeFileSync(join(dir, "payload"), randomBytes(4096))
    execFileSync("tar", ["-cf", join(dir, "root.tar"), "-C", dir, "payload"])
    const tag = `prbox-test/save:${randomBytes(4).toString("hex")}`
    const id = execFileSync("docker", ["import", join(dir, "root.tar"), tag], { encoding: "utf8" }).trim()
    rmSync(dir, { recursive: true, force: true })
    return { tag, id }
  }),
  ({ id }) => Effect.sync(() => spawnSync("docker", ["rmi", "-f", id], { stdio: "ignore" }))
)

layer(NodeDocker.layer(), { excludeTestServices: true })("NodeDocker save and load against the local engine", (it) => {
  it.effect("an image saved, removed and loaded back comes back under its tag with its id", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { tag, id } = yield* scopedImage
      const archive = yield* Effect.scoped(
        Effect.flatMap(docker.saveImage(tag), (stream) => Effect.tryPromise(() => stream.toArray()))
      )
      execFileSync("docker", ["rmi", tag], { stdio: "ignore" })
      assert.isUndefined(yield* docker.imageInfo(tag))
      const lines: Array<string> = []
      yield* docker.loadImage(Readable.from(archive), (line) => lines.push(line))
      assert.strictEqual((yield* docker.imageInfo(tag))?.id, id)
      assert.deepStrictEqual(lines, [`Loaded image: ${tag}`])
    }).pipe(Effect.scoped)
  )

  it.effect("saving an image the engine does not have is ImageNotFound", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const error = yield* Effect.flip(Effect.scoped(docker.saveImage("prbox-test/absent:never")))
      assert.strictEqual(error._tag, "ImageNotFound")
    })
  )

  it.effect("an archive that is not one fails the load (the engine's refusal, not success)", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const error = yield* Effect.flip(docker.loadImage(Readable.from([Buffer.from("not a tar archive")]), () => {}))
      assert.strictEqual(error._tag, "DockerEngineError")
      assert.strictEqual(error.operation, "image.load")
    })
  )

  it.effect("an archive whose source fails midway fails the load with the source's error", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const failing = new Readable({
        read() {
          this.push(Buffer.alloc(1024))
          this.destroy(new Error("the saving engine went away"))
        }
      })
      const error = yield* Effect.flip(docker.loadImage(failing, () => {}))
      assert.strictEqual(error._tag, "DockerEngineError")
      assert.include(error.message, "the saving engine went away")
    })
  )
})
