import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Docker, NodeDocker } from "@prbox/docker"
import { Context, Effect, Exit, Layer, Schedule, Scope } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { listening, uniqueName } from "../../docker/test/fixtures.ts"
import { type RemoteEngine, startRemoteEngine, startTcpRelay } from "../../docker/test/RemoteEngine.ts"
import { PREVIEW_RELAY_PORT } from "../src/CodeServerSpec.ts"
import { ContainerRuntime, type ContainerSpec, LABELS } from "../src/index.ts"
import { readToEnd } from "../src/node/docker/RelayClient.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"
import { healthzTag } from "./harness.ts"

// The Docker runtime on a second, real engine reached over SSH
// (packages/docker/test/RemoteEngine.ts): code-server's port forwarded to
// this machine's 127.0.0.1, the preview relay dialled over SSH.

class Remote extends Context.Service<Remote, RemoteEngine>()("prbox/engine/test/Remote") {}

const remoteLayer = Layer.effect(
  Remote,
  Effect.tap(startRemoteEngine, (remote) => remote.loadImage(healthzTag))
)

/** The runtime (and its Docker client) on `remote`, or on another port leading to it; closed with the scope. */
const runtimeOn = (remote: RemoteEngine, via: { readonly port: number; readonly knownHostsFile: string } = remote) =>
  Effect.gen(function* () {
    const docker = NodeDocker.layer({
      address: `ssh://${remote.user}@127.0.0.1:${via.port}`,
      knownHostsFile: via.knownHostsFile,
      identityFile: remote.identityFile
    })
    const built = yield* Layer.build(Layer.provideMerge(NodeContainerRuntime.layer, docker))
    return { runtime: Context.get(built, ContainerRuntime), docker: Context.get(built, Docker) }
  })

/** A runtime built and closed by the caller: a daemon's life. */
const daemon = (remote: RemoteEngine) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const made = yield* runtimeOn(remote).pipe(Scope.provide(scope))
    return { ...made, exit: Scope.close(scope, Exit.void) }
  })

/** Through a relay the test can cut (known_hosts names the relay's port). */
const throughRelay = (remote: RemoteEngine) =>
  Effect.gen(function* () {
    const relay = yield* startTcpRelay(remote.port)
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-remote-ports-"))),
      (made) => Effect.sync(() => rmSync(made, { recursive: true, force: true }))
    )
    const knownHostsFile = join(dir, "known_hosts")
    writeFileSync(knownHostsFile, `[127.0.0.1]:${relay.port} ${remote.hostKey}\n`)
    return { relay, ...(yield* runtimeOn(remote, { port: relay.port, knownHostsFile })) }
  })

/** A healthz sandbox's spec, at the stable port `hostPort`, with a relay port. */
const healthzSandbox = (hostPort: number): ContainerSpec => ({
  name: uniqueName("remote-ports"),
  image: healthzTag,
  args: [],
  env: {},
  labels: { [TEST_RUN_LABEL]: inject("testRunId") },
  binds: [],
  user: "",
  workingDir: "/",
  port: 8080,
  hostPort,
  relayPort: PREVIEW_RELAY_PORT,
  capDrop: []
})

/** A healthz sandbox on the remote engine, removed when the test's scope closes. */
const sandbox = (runtime: ContainerRuntime["Service"], hostPort: number) =>
  Effect.acquireRelease(runtime.provision(healthzSandbox(hostPort)), (containerId) =>
    Effect.orDie(runtime.destroy(containerId))
  )

/** GET /healthz on this machine's 127.0.0.1:`port`: the status, or the connection's error code. */
const healthz = (port: number) =>
  Effect.tryPromise(async () => {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`)
    await response.text()
    return String(response.status)
  }).pipe(
    Effect.catch((error) =>
      Effect.succeed(String((error.cause as { cause?: { code?: string } } | undefined)?.cause?.code ?? error))
    )
  )

/** The server in the container starts in milliseconds, but not before `start` returns. */
const answers = (port: number) =>
  healthz(port).pipe(
    Effect.filterOrFail((status) => status === "200"),
    Effect.retry({ schedule: Schedule.spaced(100), times: 100 }),
    Effect.orElseSucceed(() => "no answer")
  )

interface PortBinding {
  readonly HostIp: string
  readonly HostPort: string
}

/** `docker inspect` run on the remote engine's host: what the remote engine itself says. */
const inspectOnRemote = (remote: RemoteEngine, containerId: string) => {
  const [info] = JSON.parse(
    execFileSync("docker", ["exec", remote.containerId, "docker", "inspect", containerId], { encoding: "utf8" })
  ) as Array<{
    readonly Config: { readonly Labels: Readonly<Record<string, string>> }
    readonly HostConfig: { readonly PortBindings: Readonly<Record<string, ReadonlyArray<PortBinding>>> }
    readonly NetworkSettings: { readonly Ports: Readonly<Record<string, ReadonlyArray<PortBinding> | null>> }
  }>
  if (info === undefined) throw new Error(`no container ${containerId} on the remote engine`)
  return info
}

/**
 * A stand-in for prbox's relay (the healthz image has no Node): given as the
 * relay's `node`, the runtime's relay start runs it, the relay's source
 * ignored. It answers one request per connection as the relay would.
 */
const FAKE_RELAY = [
  "read -r line",
  'case "$line" in',
  '  *" ports") echo ok; cat /proc/net/tcp /proc/net/tcp6 2>/dev/null ;;',
  '  *" connect 8080") echo ok; echo "hello from the container" ;;',
  "  *) echo closed ;;",
  "esac"
].join("\n")
const fakeRelayAccess = {
  token: "test-token",
  node: [
    "sh",
    "-c",
    `printf '%s\\n' "$0" > /tmp/relay.sh && exec nc -ll -p ${PREVIEW_RELAY_PORT} -e sh /tmp/relay.sh`,
    FAKE_RELAY
  ],
  user: ""
}

// Real time: the remote engine's start and the SSH handshakes run on real clocks.
layer(remoteLayer, { excludeTestServices: true, timeout: 180_000 })(
  "the Docker runtime's ports on a remote engine over SSH",
  (it) => {
    it.effect(
      "code-server answers on this machine's 127.0.0.1 at the sandbox's port; the remote publishes on its 127.0.0.1 only, at a port it picks",
      () =>
        Effect.gen(function* () {
          const remote = yield* Remote
          const { runtime } = yield* runtimeOn(remote)
          const stable = yield* runtime.freePort(new Set())
          const id = yield* sandbox(runtime, stable)
          assert.strictEqual(yield* runtime.start(id), stable)
          assert.strictEqual(yield* answers(stable), "200")
          assert.deepStrictEqual(yield* runtime.state(id), { _tag: "Running", hostPort: stable })

          const info = inspectOnRemote(remote, id)
          assert.strictEqual(info.Config.Labels[LABELS.port], String(stable))
          const bindings = [
            ...Object.values(info.HostConfig.PortBindings).flat(),
            ...Object.values(info.NetworkSettings.Ports).flatMap((bound) => bound ?? [])
          ]
          assert.isNotEmpty(bindings)
          for (const binding of bindings) assert.strictEqual(binding.HostIp, "127.0.0.1", JSON.stringify(bindings))
          // Fixed at nothing: Docker picks the remote port at every start.
          assert.deepStrictEqual(info.HostConfig.PortBindings["8080/tcp"], [{ HostIp: "127.0.0.1", HostPort: "" }])
          assert.notStrictEqual(info.NetworkSettings.Ports["8080/tcp"]?.[0]?.HostPort, String(stable))
        })
    )

    it.effect("stop closes the forward; a start answers on the same port again", () =>
      Effect.gen(function* () {
        const { runtime } = yield* runtimeOn(yield* Remote)
        const stable = yield* runtime.freePort(new Set())
        const id = yield* sandbox(runtime, stable)
        yield* runtime.start(id)
        assert.strictEqual(yield* answers(stable), "200")
        assert.strictEqual(yield* runtime.stop(id), "stopped")
        assert.strictEqual(yield* healthz(stable), "ECONNREFUSED")
        assert.strictEqual(yield* runtime.start(id), stable)
        assert.strictEqual(yield* answers(stable), "200")
        yield* runtime.destroy(id)
        assert.strictEqual(yield* healthz(stable), "ECONNREFUSED")
      })
    )

    it.effect("a runtime made afresh (a daemon restart) forwards a running container again on attach", () =>
      Effect.gen(function* () {
        const remote = yield* Remote
        const first = yield* daemon(remote)
        const stable = yield* first.runtime.freePort(new Set())
        const id = yield* first.runtime.provision(healthzSandbox(stable))
        yield* first.runtime.start(id)
        assert.strictEqual(yield* answers(stable), "200")
        yield* first.exit
        assert.strictEqual(yield* healthz(stable), "ECONNREFUSED")

        const { runtime } = yield* runtimeOn(remote)
        yield* Effect.addFinalizer(() => Effect.orDie(runtime.destroy(id)))
        // The port is the container's own record: nothing else survived the first runtime.
        assert.deepStrictEqual(yield* runtime.state(id), { _tag: "Running", hostPort: stable })
        yield* runtime.attach(id)
        assert.strictEqual(yield* answers(stable), "200")
        // Idempotent: a second attach (another reconcile) keeps the forward it has.
        yield* runtime.attach(id)
        assert.strictEqual(yield* healthz(stable), "200")
      })
    )

    it.effect("the SSH connection cut while a client uses the port: its next request is carried on a new one", () =>
      Effect.gen(function* () {
        const { relay, runtime } = yield* throughRelay(yield* Remote)
        const stable = yield* runtime.freePort(new Set())
        const id = yield* sandbox(runtime, stable)
        yield* runtime.start(id)
        assert.strictEqual(yield* answers(stable), "200")
        assert.strictEqual(yield* healthz(stable), "200")
        assert.strictEqual(relay.accepted(), 1)
        relay.cut()
        // The first request after the cut: no retry, no wait for the drop to be noticed.
        assert.strictEqual(yield* healthz(stable), "200")
        assert.strictEqual(relay.accepted(), 2)
      })
    )

    it.effect("a sandbox port taken on this machine fails the start with PortTaken", () =>
      Effect.gen(function* () {
        const { runtime } = yield* runtimeOn(yield* Remote)
        const taken = yield* listening
        const id = yield* sandbox(runtime, taken)
        const error = yield* Effect.flip(runtime.start(id))
        assert.strictEqual(error._tag, "PortTaken")
      })
    )

    it.effect("a dial to a port nothing listens on at the remote's 127.0.0.1 is ConnectionRefused", () =>
      Effect.gen(function* () {
        const { docker } = yield* runtimeOn(yield* Remote)
        assert.strictEqual(docker.loopback.kind, "ssh")
        const refused = yield* Effect.flip(docker.loopback.dial(1))
        assert.strictEqual(refused._tag, "ConnectionRefused")
      })
    )

    it.effect("the preview relay is started and reached over SSH: connect and listeningPorts", () =>
      Effect.gen(function* () {
        const { runtime } = yield* runtimeOn(yield* Remote)
        const id = yield* sandbox(runtime, yield* runtime.freePort(new Set()))
        yield* runtime.start(id)
        // Nothing listens on the relay's port yet: the first dial is refused, which starts the relay.
        const stream = yield* runtime.connect(id, 8080, fakeRelayAccess)
        assert.strictEqual(yield* readToEnd(stream), "hello from the container\n")
        const closed = yield* Effect.flip(runtime.connect(id, 3999, fakeRelayAccess))
        assert.strictEqual(closed._tag, "PortClosed")
        const ports = yield* runtime.listeningPorts(id, fakeRelayAccess)
        assert.includeMembers([...ports], [8080, PREVIEW_RELAY_PORT])
      })
    )
  }
)
