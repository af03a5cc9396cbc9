import { randomBytes } from "node:crypto"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Docker, NodeDocker } from "@prbox/docker"
import { codeServerVolumeName } from "@prbox/domain"
import { Context, Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { type RemoteEngine, remoteEngineWith } from "../../docker/test/RemoteEngine.ts"
import { ContainerRuntime, type ContainerSpec, LABELS } from "../src/index.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"
import { healthzTag } from "./harness.ts"

class Remote extends Context.Service<Remote, RemoteEngine>()("prbox/engine/test/CarriedRemote") {}

const INSTALL = `test-install-${randomBytes(4).toString("hex")}`
/** A fresh key: this run makes (and removes) its own code-server volume. */
const SHARED_KEY = `test-${randomBytes(4).toString("hex")}`

const remoteLayer = Layer.effect(Remote, remoteEngineWith(healthzTag))

/** The runtime under test on the remote engine, and a Docker client of the test's own to look at what it made. */
const onRemote = Layer.unwrap(
  Effect.map(Remote, (remote) => {
    const docker = NodeDocker.layer({
      address: remote.address,
      knownHostsFile: remote.knownHostsFile,
      identityFile: remote.identityFile
    })
    return Layer.merge(
      NodeContainerRuntime.layer.pipe(Layer.provide(docker), Layer.provide(FetchHttpClient.layer)),
      docker
    )
  })
).pipe(Layer.provideMerge(remoteLayer))

/** This machine's folders of a sandbox: a workspace (a `.git`, modes, a link), a home, and a code-server stand-in. */
const hostFolders = Effect.acquireRelease(
  Effect.sync(() => {
    const root = mkdtempSync(join(tmpdir(), "prbox-carried-"))
    const workspace = join(root, "workspace")
    mkdirSync(join(workspace, ".git"), { recursive: true })
    writeFileSync(join(workspace, ".git/HEAD"), "ref: refs/heads/pr-1\n")
    writeFileSync(join(workspace, "run.sh"), "echo from the pr\n")
    chmodSync(join(workspace, "run.sh"), 0o755)
    writeFileSync(join(workspace, "private.txt"), "mine\n")
    chmodSync(join(workspace, "private.txt"), 0o600)
    symlinkSync("run.sh", join(workspace, "start"))
    const home = join(root, "home")
    mkdirSync(join(home, ".config"), { recursive: true })
    writeFileSync(join(home, ".config/settings"), "theme=dark\n")
    const shared = join(root, "code-server")
    mkdirSync(join(shared, "bin"), { recursive: true })
    writeFileSync(join(shared, "bin/node"), "not really node\n")
    return { workspace, home, shared, root }
  }),
  ({ root }) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
)

type Folders = Effect.Success<typeof hostFolders>

const sandboxSpec = (id: string, folders: Folders, overrides: Partial<ContainerSpec> = {}): ContainerSpec => ({
  name: `prbox-${id}`,
  image: healthzTag,
  args: [],
  env: {},
  capDrop: [],
  labels: {
    [TEST_RUN_LABEL]: inject("testRunId"),
    [LABELS.sandbox]: id,
    [LABELS.home]: "/prbox-test-home",
    [LABELS.install]: INSTALL
  },
  carried: [
    { kind: "workspace", hostPath: folders.workspace, containerPath: "/workspace" },
    { kind: "home", hostPath: folders.home, containerPath: "/home/prbox" }
  ],
  shared: { hostPath: folders.shared, containerPath: "/opt/prbox/code-server", key: SHARED_KEY },
  binds: [],
  user: "",
  workingDir: "/workspace",
  port: 8080,
  ...overrides
})

const newId = () => randomBytes(6).toString("hex")

/** Provisions `spec`, collecting its progress lines; the container and the sandbox's volumes go with the scope. */
const provisioned = (spec: ContainerSpec) =>
  Effect.gen(function* () {
    const runtime = yield* ContainerRuntime
    const lines: Array<string> = []
    const containerId = yield* Effect.acquireRelease(
      runtime.provision(spec, (line) => Effect.sync(() => void lines.push(line))),
      (id) => Effect.orDie(runtime.destroy(id))
    )
    return { containerId, lines }
  })

/** The shared code-server volume this run made, removed when the scope closes. */
const removeSharedVolume = Effect.flatMap(Docker, (docker) =>
  Effect.addFinalizer(() => Effect.ignore(docker.removeVolume(codeServerVolumeName(SHARED_KEY))))
)

const sh = (containerId: string, script: string) =>
  Effect.flatMap(Docker, (docker) =>
    docker.exec(containerId, { argv: ["sh", "-c", script], timeoutMs: 10_000, maxOutputBytes: 8192 })
  )

const volumesOf = (id: string) =>
  Effect.flatMap(Docker, (docker) => docker.listVolumesByLabel({ [LABELS.sandbox]: id }))

// Real time: the remote engine's start and the SSH handshakes run on real clocks.
layer(onRemote, { excludeTestServices: true, timeout: 300_000 })(
  "a sandbox's files on an engine that cannot see this machine's",
  (it) => {
    it.effect(
      "carried: the workspace's files, modes and link and the home are in the container; code-server's volume is made once, read-only; destroy removes the sandbox's volumes",
      () =>
        Effect.gen(function* () {
          const runtime = yield* ContainerRuntime
          const docker = yield* Docker
          yield* removeSharedVolume
          const folders = yield* hostFolders
          // As an open does: the image is made present first (the probe runs with it).
          yield* runtime.ensureImage(healthzTag, () => Effect.void)
          assert.strictEqual(yield* runtime.filesAt, "engine")
          const first = newId()
          const a = yield* provisioned(sandboxSpec(first, folders))
          assert.includeMembers(a.lines, [
            `copying code-server (${SHARED_KEY}) to the engine: 0 B of 16 B (1 file)`,
            "copying the workspace to the engine: 0 B of 43 B (3 files)",
            "copying the workspace to the engine: 43 B of 43 B (3 files)",
            "copying the home to the engine: 0 B of 11 B (1 file)"
          ])
          assert.strictEqual(
            a.lines.find((line) => line.startsWith("copying the workspace")),
            "copying the workspace to the engine: 0 B of 43 B (3 files)",
            "the total comes first"
          )
          yield* runtime.start(a.containerId)
          const seen = yield* sh(
            a.containerId,
            "cd /workspace && stat -c '%n %a %u' run.sh private.txt .git/HEAD && readlink start && cat /home/prbox/.config/settings /opt/prbox/code-server/bin/node"
          )
          assert.strictEqual(seen.exitCode, 0, seen.stderr)
          const uid = process.getuid?.() ?? 0
          assert.strictEqual(
            seen.stdout,
            `run.sh 755 ${uid}\nprivate.txt 600 ${uid}\n.git/HEAD 644 ${uid}\nrun.sh\ntheme=dark\nnot really node\n`
          )
          const write = yield* sh(a.containerId, "echo x > /opt/prbox/code-server/bin/node")
          assert.notStrictEqual(write.exitCode, 0, "code-server's volume is read-only")
          assert.deepStrictEqual((yield* volumesOf(first)).map((volume) => volume.name).toSorted(), [
            `prbox-${first}-home`,
            `prbox-${first}-workspace`
          ])

          const second = newId()
          const b = yield* provisioned(sandboxSpec(second, folders))
          assert.isFalse(
            b.lines.some((line) => line.startsWith("copying code-server")),
            "the second sandbox mounts the volume the first one filled"
          )
          assert.isTrue(yield* docker.hasPath(b.containerId, "/opt/prbox/code-server/bin/node"))
          const shared = yield* docker.listVolumesByLabel({ [TEST_RUN_LABEL]: inject("testRunId") })
          assert.strictEqual(shared.filter((volume) => volume.name === codeServerVolumeName(SHARED_KEY)).length, 1)

          assert.strictEqual(yield* runtime.destroy(a.containerId), "removed")
          assert.deepStrictEqual(yield* volumesOf(first), [])
          assert.strictEqual((yield* volumesOf(second)).length, 2, "another sandbox's volumes stay")
        })
    )

    it.effect(
      "a container made again for the sandbox reuses its volumes: nothing is copied, the user's edits stay",
      () =>
        Effect.gen(function* () {
          const runtime = yield* ContainerRuntime
          yield* removeSharedVolume
          const folders = yield* hostFolders
          const id = newId()
          const spec = sandboxSpec(id, folders)
          const before = yield* runtime.provision(spec)
          yield* runtime.start(before)
          assert.strictEqual((yield* sh(before, "echo edited > /workspace/run.sh")).exitCode, 0)
          // A rebuild or a port move: the container goes, the files stay.
          yield* runtime.destroy(before, { keepFiles: true })
          assert.strictEqual((yield* volumesOf(id)).length, 2)
          const again = yield* provisioned(spec)
          assert.deepStrictEqual(again.lines, ["the sandbox's files are on the engine already: kept as they are"])
          yield* runtime.start(again.containerId)
          assert.strictEqual((yield* sh(again.containerId, "cat /workspace/run.sh")).stdout, "edited\n")
        })
    )

    it.effect(
      "an image that ships prbox's fill markers and its own code-server seeds no volume: prbox's files are copied",
      () =>
        Effect.gen(function* () {
          const runtime = yield* ContainerRuntime
          const docker = yield* Docker
          const folders = yield* hostFolders
          // A PR's image, built on the engine, with files where prbox's volumes are mounted: a "node" and every marker a fill leaves.
          const context = mkdtempSync(join(tmpdir(), "prbox-seeding-"))
          yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(context, { recursive: true, force: true })))
          writeFileSync(
            join(context, "Dockerfile"),
            [
              `FROM ${healthzTag}`,
              "RUN mkdir -p /prbox-fill/bin /workspace /home/prbox && echo evil > /prbox-fill/bin/node && touch /prbox-fill/.prbox-carried /workspace/.prbox-carried /home/prbox/.prbox-carried && echo evil > /workspace/run.sh",
              ""
            ].join("\n")
          )
          const { tag: hostile } = yield* runtime.buildImage(
            {
              contextDir: context,
              dockerfile: "Dockerfile",
              args: {},
              repository: "prbox-test/seeding",
              labels: { [TEST_RUN_LABEL]: inject("testRunId") }
            },
            () => Effect.void
          )
          const key = `test-seeding-${randomBytes(4).toString("hex")}`
          yield* Effect.addFinalizer(() => Effect.ignore(docker.removeVolume(codeServerVolumeName(key))))
          const spec = sandboxSpec(newId(), folders, {
            image: hostile,
            shared: { hostPath: folders.shared, containerPath: "/opt/prbox/code-server", key }
          })
          const made = yield* provisioned(spec)
          assert.isTrue(made.lines.some((line) => line.startsWith("copying code-server")))
          assert.isTrue(made.lines.some((line) => line.startsWith("copying the workspace")))
          yield* runtime.start(made.containerId)
          const seen = yield* sh(made.containerId, "cat /opt/prbox/code-server/bin/node /workspace/run.sh")
          assert.strictEqual(seen.stdout, "not really node\necho from the pr\n")
        })
    )

    it.effect("the user's own mounts are refused before anything is made", () =>
      Effect.gen(function* () {
        const runtime = yield* ContainerRuntime
        const docker = yield* Docker
        const folders = yield* hostFolders
        const id = newId()
        const refused = yield* Effect.flip(
          runtime.provision(
            sandboxSpec(id, folders, {
              binds: [{ hostPath: folders.home, containerPath: "/data", readOnly: true }]
            })
          )
        )
        assert.include(refused.detail, `cannot mount this machine's folders (${folders.home})`)
        assert.deepStrictEqual(yield* volumesOf(id), [])
        assert.deepStrictEqual(yield* docker.listByLabel({ [LABELS.sandbox]: id }, { all: true }), [])
      })
    )
  }
)

layer(NodeContainerRuntime.layer.pipe(Layer.provideMerge(NodeDocker.layer()), Layer.provide(FetchHttpClient.layer)), {
  excludeTestServices: true
})("a sandbox's files on the local engine", (it) => {
  it.effect("are bind-mounted as before: what the host writes the container sees, and no volume is made", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const folders = yield* hostFolders
      yield* runtime.ensureImage(healthzTag, () => Effect.void)
      assert.strictEqual(yield* runtime.filesAt, "host")
      const id = newId()
      const { containerId, lines } = yield* provisioned(sandboxSpec(id, folders))
      assert.deepStrictEqual(lines, [])
      yield* runtime.start(containerId)
      writeFileSync(join(folders.workspace, "later.txt"), "after the start\n")
      assert.strictEqual((yield* sh(containerId, "cat /workspace/later.txt")).stdout, "after the start\n")
      assert.deepStrictEqual(yield* volumesOf(id), [])
    })
  )
})
