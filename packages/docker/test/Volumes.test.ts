import { randomBytes } from "node:crypto"
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { Docker, FolderArchive, NodeDocker } from "../src/index.ts"
import { healthzSpec, healthzTag, scopedContainer } from "./fixtures.ts"
import { type RemoteEngine, remoteEngineWith } from "./RemoteEngine.ts"

class Remote extends Context.Service<Remote, RemoteEngine>()("prbox/docker/test/VolumesRemote") {}

const remoteLayer = Layer.effect(Remote, remoteEngineWith(healthzTag))

const runLabel = () => ({ [TEST_RUN_LABEL]: inject("testRunId") })

/** A volume on `docker`, removed when the test's scope closes. */
const scopedVolume = (docker: Docker["Service"], labels: Readonly<Record<string, string>> = {}) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const name = `prbox-test-volume-${randomBytes(4).toString("hex")}`
      yield* docker.createVolume(name, { ...labels, ...runLabel() })
      return name
    }),
    (name) => Effect.ignore(docker.removeVolume(name))
  )

/** A folder with a file of each kind the carry keeps: modes, an owner, a link, an empty folder. */
const sampleFolder = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "prbox-archive-"))
    mkdirSync(join(root, "src/empty"), { recursive: true })
    writeFileSync(join(root, "src/main.sh"), "echo carried\n")
    chmodSync(join(root, "src/main.sh"), 0o750)
    writeFileSync(join(root, "secret.txt"), "only me\n")
    chmodSync(join(root, "secret.txt"), 0o600)
    chownSync(join(root, "secret.txt"), 1234, 2345)
    symlinkSync("src/main.sh", join(root, "link"))
    chmodSync(root, 0o755)
    return root
  }),
  (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

const overSsh = Effect.gen(function* () {
  const remote = yield* Remote
  return yield* NodeDocker.make({
    address: remote.address,
    knownHostsFile: remote.knownHostsFile,
    identityFile: remote.identityFile
  })
})

layer(remoteLayer, { excludeTestServices: true, timeout: 180_000 })(
  "volumes and archives on a real remote engine",
  (it) => {
    it.effect("a volume is made with its labels, listed by them, and removed (once gone: absent)", () =>
      Effect.gen(function* () {
        const docker = yield* overSsh
        const mark = randomBytes(4).toString("hex")
        const name = yield* scopedVolume(docker, { "dev.prbox.test-volume": mark })
        yield* scopedVolume(docker, { "dev.prbox.test-volume": "another" })
        const listed = yield* docker.listVolumesByLabel({ "dev.prbox.test-volume": mark })
        assert.deepStrictEqual(
          listed.map((volume) => volume.name),
          [name]
        )
        assert.strictEqual(listed[0]?.labels["dev.prbox.test-volume"], mark)
        // Made again: the same volume, kept as it is.
        yield* docker.createVolume(name, { ...runLabel(), "dev.prbox.test-volume": mark })
        assert.strictEqual((yield* docker.listVolumesByLabel({ "dev.prbox.test-volume": mark })).length, 1)
        assert.strictEqual(yield* docker.removeVolume(name), "removed")
        assert.strictEqual(yield* docker.removeVolume(name), "absent")
        assert.deepStrictEqual(yield* docker.listVolumesByLabel({ "dev.prbox.test-volume": mark }), [])
      })
    )

    it.effect("a folder sent over SSH into a created container's volume keeps modes, owners and links", () =>
      Effect.gen(function* () {
        const docker = yield* overSsh
        const root = yield* sampleFolder
        const volume = yield* scopedVolume(docker)
        const { id } = yield* scopedContainer(
          healthzSpec({ volumes: [{ volume, containerPath: "/srv/carried", readOnly: false }] })
        ).pipe(Effect.provideService(Docker, docker))
        const listing = yield* FolderArchive.scanFolder(root)
        assert.strictEqual(listing.files, 2)
        assert.strictEqual(listing.bytes, "echo carried\n".length + "only me\n".length)
        const sent: Array<number> = []
        // Never started: the archive goes into the volume through the container's mounts.
        yield* docker.putArchive(
          id,
          "/srv",
          FolderArchive.packEntries(root, listing.entries, {
            prefix: "carried",
            owners: true,
            onFile: (bytes) => sent.push(bytes)
          })
        )
        assert.deepStrictEqual(sent.toSorted(), ["only me\n".length, "echo carried\n".length].toSorted())
        // A second container on the same volume sees what the first one's archive put there.
        const { id: reader } = yield* scopedContainer(
          healthzSpec({ volumes: [{ volume, containerPath: "/carried", readOnly: true }] })
        ).pipe(Effect.provideService(Docker, docker))
        yield* docker.start(reader)
        const stat = yield* docker.exec(reader, {
          argv: [
            "sh",
            "-c",
            "cd /carried && stat -c '%n %a %u:%g' . src/main.sh secret.txt src/empty && readlink link && cat link"
          ],
          timeoutMs: 10_000,
          maxOutputBytes: 4096
        })
        assert.strictEqual(stat.exitCode, 0, stat.stderr)
        const uid = process.getuid?.() ?? 0
        const gid = process.getgid?.() ?? 0
        assert.strictEqual(
          stat.stdout,
          [
            `. 755 ${uid}:${gid}`,
            `src/main.sh 750 ${uid}:${gid}`,
            "secret.txt 600 1234:2345",
            `src/empty 755 ${uid}:${gid}`,
            "src/main.sh",
            "echo carried",
            ""
          ].join("\n")
        )
        assert.isTrue(yield* docker.hasPath(reader, "/carried/link"))
      })
    )

    it.effect("an archive that cannot be read fails the upload with its reason", () =>
      Effect.gen(function* () {
        const docker = yield* overSsh
        const root = yield* sampleFolder
        const { id } = yield* scopedContainer(healthzSpec()).pipe(Effect.provideService(Docker, docker))
        const listing = yield* FolderArchive.scanFolder(root)
        // Gone since it was listed.
        rmSync(join(root, "secret.txt"))
        const failed = yield* Effect.flip(
          docker.putArchive(id, "/tmp", FolderArchive.packEntries(root, listing.entries, { owners: true }))
        )
        assert.strictEqual(failed._tag, "DockerEngineError")
        assert.include(failed.message, "ENOENT")
      })
    )
  }
)

layer(Layer.empty)("volumes on an engine that cannot be asked", (it) => {
  it.effect("listing fails rather than answering that there are none", () =>
    Effect.gen(function* () {
      const docker = yield* NodeDocker.make({ socketPath: join(tmpdir(), "prbox-no-engine.sock") })
      const failed = yield* Effect.flip(docker.listVolumesByLabel({ [TEST_RUN_LABEL]: inject("testRunId") }))
      assert.strictEqual(failed._tag, "EnumerationError")
    })
  )
})
