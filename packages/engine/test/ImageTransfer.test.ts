import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Docker, type DockerShape, NodeDocker } from "@prbox/docker"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { type RemoteEngine, startRemoteEngine } from "../../docker/test/RemoteEngine.ts"
import { ContainerRuntime, RuntimeError } from "../src/index.ts"
import { ImageSource } from "../src/node/docker/ImageTransfer.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"

// Images reach a real remote engine (packages/docker/test/RemoteEngine.ts,
// which has no registry) from this machine's engine by save/load.

class Remote extends Context.Service<Remote, RemoteEngine>()("prbox/engine/test/Remote") {}

// Real time: the remote engine's start and the SSH handshakes run on real clocks.
const remoteLayer = Layer.effect(Remote, startRemoteEngine)

/** The remote engine's own docker CLI. */
const remoteDocker = (remote: RemoteEngine, ...args: ReadonlyArray<string>) =>
  execFileSync("docker", ["exec", remote.containerId, "docker", ...args], { encoding: "utf8" }).trim()

/** The id of `ref` on an engine's own CLI, "" when it is not there. */
const localId = (ref: string) =>
  execFileSync("docker", ["image", "ls", "--no-trunc", "--format", "{{.ID}}", ref], { encoding: "utf8" }).trim()
const remoteId = (remote: RemoteEngine, ref: string) =>
  remoteDocker(remote, "image", "ls", "--no-trunc", "--format", "{{.ID}}", ref)

interface Calls {
  loads: number
  localLookups: number
}

/**
 * The remote engine's runtime as NodeEngine builds it (this machine's engine
 * as ImageSource), its Docker client counting loads and the local one
 * lookups. With `bothAsked`, the first load waits until this machine's engine
 * was asked twice (a second ensure has begun).
 */
const remoteRuntime = (bothAsked?: Deferred.Deferred<void>) =>
  Effect.gen(function* () {
    const remote = yield* Remote
    const calls: Calls = { loads: 0, localLookups: 0 }
    const target = yield* NodeDocker.make({
      address: remote.address,
      knownHostsFile: remote.knownHostsFile,
      identityFile: remote.identityFile
    })
    const local = yield* NodeDocker.make({ socketPath: "/var/run/docker.sock" })
    const counted: DockerShape = {
      ...target,
      loadImage: (archive, onProgress) =>
        Effect.gen(function* () {
          calls.loads += 1
          if (bothAsked !== undefined && calls.loads === 1) yield* Deferred.await(bothAsked)
          yield* target.loadImage(archive, onProgress)
        })
    }
    const source: DockerShape = {
      ...local,
      imageInfo: (ref) =>
        Effect.gen(function* () {
          calls.localLookups += 1
          if (bothAsked !== undefined && calls.localLookups === 2) yield* Deferred.succeed(bothAsked, undefined)
          return yield* local.imageInfo(ref)
        })
    }
    const runtime = yield* Layer.build(
      NodeContainerRuntime.layer.pipe(
        Layer.provide(Layer.succeed(Docker, counted)),
        Layer.provide(Layer.succeed(ImageSource, source))
      )
    ).pipe(Effect.map((context) => Context.get(context, ContainerRuntime)))
    return { runtime, calls, remote }
  })

/** A tiny image made on this machine's engine only (1 MB of random bytes, unique id), removed after the test. */
const localImage = (tag: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "prbox-transfer-"))
      mkdirSync(join(dir, "root"))
      writeFileSync(join(dir, "root", "payload"), randomBytes(1_000_000))
      execFileSync("tar", ["-C", join(dir, "root"), "-cf", join(dir, "root.tar"), "."])
      const id = execFileSync("docker", ["import", join(dir, "root.tar"), tag], { encoding: "utf8" }).trim()
      rmSync(dir, { recursive: true, force: true })
      return id
    }),
    (id) => Effect.sync(() => execFileSync("docker", ["rmi", "--force", id], { stdio: "ignore" }))
  )

/** Removes `ref` from the remote engine after the test. */
const removedFromRemote = (ref: string) =>
  Effect.flatMap(Remote, (remote) =>
    Effect.addFinalizer(() =>
      Effect.sync(() => {
        const id = remoteId(remote, ref)
        if (id !== "") remoteDocker(remote, "rmi", "--force", id)
      })
    )
  )

const uniqueTag = (name: string) => `prbox-test/${name}:${randomBytes(4).toString("hex")}`

const ensure = (runtime: ContainerRuntime["Service"], image: string) =>
  Effect.gen(function* () {
    const lines: Array<string> = []
    const result = yield* Effect.result(runtime.ensureImage(image, (line) => Effect.sync(() => void lines.push(line))))
    return { result, lines }
  })

layer(remoteLayer, { excludeTestServices: true, timeout: 180_000 })("images on a remote engine", (it) => {
  it.effect("an image only on this machine is copied (progress shown, same id); a second ensure copies nothing", () =>
    Effect.gen(function* () {
      const tag = uniqueTag("transfer")
      const id = yield* localImage(tag)
      yield* removedFromRemote(tag)
      const { runtime, calls, remote } = yield* remoteRuntime()

      const first = yield* ensure(runtime, tag)
      assert.strictEqual(first.result._tag, "Success", String(first.lines))
      assert.strictEqual(remoteId(remote, tag), id)
      assert.strictEqual(calls.loads, 1)
      assert.isTrue(first.lines[0]?.startsWith(`copying ${tag} (1.0 MB) from this machine's engine`), first.lines[0])
      assert.isTrue(
        first.lines.some((line) => /^sent \d+\.\d MB of 1\.0 MB$/.test(line)),
        `bytes sent: ${first.lines.join(" | ")}`
      )
      assert.include(first.lines, `Loaded image: ${tag}`)

      const second = yield* ensure(runtime, tag)
      assert.strictEqual(second.result._tag, "Success")
      assert.strictEqual(calls.loads, 1, "the second ensure loaded again")
      assert.deepStrictEqual(second.lines, [])
    }).pipe(Effect.scoped)
  )

  it.effect("a tag moved to another image on this machine is copied again", () =>
    Effect.gen(function* () {
      const tag = uniqueTag("moved")
      yield* removedFromRemote(tag)
      const { runtime, calls, remote } = yield* remoteRuntime()
      const before = yield* localImage(tag)
      assert.strictEqual((yield* ensure(runtime, tag)).result._tag, "Success")
      assert.strictEqual(remoteId(remote, tag), before)

      const after = yield* localImage(tag)
      assert.notStrictEqual(after, before)
      const again = yield* ensure(runtime, tag)
      assert.strictEqual(again.result._tag, "Success", String(again.lines))
      assert.strictEqual(remoteId(remote, tag), after)
      assert.strictEqual(calls.loads, 2)
      // The image the tag left behind on the remote goes too.
      remoteDocker(remote, "rmi", "--force", before)
    }).pipe(Effect.scoped)
  )

  it.effect("an image on neither engine: the remote's pull fails as it would without the copy", () =>
    Effect.gen(function* () {
      const { runtime, calls } = yield* remoteRuntime()
      const image = uniqueTag("nowhere")
      const { result, lines } = yield* ensure(runtime, image)
      assert.strictEqual(result._tag, "Failure")
      if (result._tag !== "Failure") return
      assert.instanceOf(result.failure, RuntimeError)
      assert.strictEqual(result.failure.operation, "image.pull")
      // The operation is named once, not once per layer it passed through.
      assert.notInclude(result.failure.message, "image.pull: image.pull")
      assert.deepStrictEqual(lines, [`pulling ${image}`])
      assert.strictEqual(calls.loads, 0)
      assert.strictEqual(calls.localLookups, 1)
    }).pipe(Effect.scoped)
  )

  it.effect("two ensures of one image at once copy it once", () =>
    Effect.gen(function* () {
      const tag = uniqueTag("concurrent")
      const id = yield* localImage(tag)
      yield* removedFromRemote(tag)
      // The first load waits until the second ensure has asked this machine's engine too.
      const { runtime, calls, remote } = yield* remoteRuntime(yield* Deferred.make<void>())
      const first = yield* Effect.forkChild(ensure(runtime, tag))
      const second = yield* Effect.forkChild(ensure(runtime, tag))
      const results = yield* Fiber.joinAll([first, second])
      assert.deepStrictEqual(
        results.map(({ result }) => result._tag),
        ["Success", "Success"]
      )
      assert.strictEqual(calls.loads, 1)
      assert.strictEqual(remoteId(remote, tag), id)
    }).pipe(Effect.scoped)
  )

  it.effect("images prbox makes (import, Dockerfile build) are made on the sandboxes' engine, not copied", () =>
    Effect.gen(function* () {
      const { runtime, calls, remote } = yield* remoteRuntime()
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-transfer-build-"))),
        (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
      )
      writeFileSync(join(dir, "payload"), randomBytes(64))
      execFileSync("tar", ["-C", dir, "-cf", join(dir, "root.tar"), "payload"])
      const imported = uniqueTag("imported")
      yield* removedFromRemote(imported)
      yield* runtime.importImage({ archivePath: join(dir, "root.tar"), tag: imported, changes: [] }, () => Effect.void)
      writeFileSync(join(dir, "Dockerfile"), "FROM scratch\nCOPY payload /payload\n")
      const built = yield* runtime.buildImage(
        { contextDir: dir, dockerfile: "Dockerfile", args: {}, repository: "prbox-test/built", labels: {} },
        () => Effect.void
      )
      yield* removedFromRemote(built.tag)
      for (const tag of [imported, built.tag]) {
        assert.notStrictEqual(remoteId(remote, tag), "", `${tag} on the remote`)
        assert.strictEqual(localId(tag), "", `${tag} on this machine`)
      }
      assert.strictEqual(calls.loads, 0)
    }).pipe(Effect.scoped)
  )
})
