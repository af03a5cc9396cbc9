import { randomBytes } from "node:crypto"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { assert, layer } from "@effect/vitest"
import { NodeDocker } from "@prbox/docker"
import { listeningPorts } from "@prbox/domain"
import { Effect, Layer, Schedule } from "effect"
import { inject } from "vitest"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { uniqueName } from "../../docker/test/fixtures.ts"
import { CODE_SERVER_MOUNT, PREVIEW_RELAY_PORT } from "../src/CodeServerSpec.ts"
import { ContainerRuntime, type ContainerSpec, type PortStream, type RelayAccess } from "../src/index.ts"
import { readToEnd } from "../src/node/docker/RelayClient.ts"
import { NodeContainerRuntime } from "../src/node/index.ts"
import { ensureCodeServerDistribution } from "../src/node/tools/CodeServerDistribution.ts"
import { bounded, healthzTag } from "./harness.ts"

/** Built once by `scripts/setup --with-test-images` (global-setup passes where). */
const distDir = process.env.PRBOX_TEST_CODE_SERVER_DIST ?? ""
const USER = "1000:1000"

const runtimeLayer = Layer.mergeAll(
  NodeContainerRuntime.layer.pipe(Layer.provide(NodeDocker.layer())),
  NodeServices.layer
)

/** A running container of `image` that does nothing, removed when the test's scope closes. */
const sandbox = (overrides: Partial<ContainerSpec>) =>
  Effect.gen(function* () {
    const runtime = yield* ContainerRuntime
    const id = yield* Effect.acquireRelease(
      runtime.provision({
        name: uniqueName("relay"),
        image: imageTag(codeServerImage),
        entrypoint: ["sleep", "infinity"],
        args: [],
        env: {},
        labels: { [TEST_RUN_LABEL]: inject("testRunId") },
        binds: [],
        user: USER,
        workingDir: "/tmp",
        port: 8080,
        capDrop: [],
        ...overrides
      }),
      (containerId) => Effect.orDie(runtime.destroy(containerId))
    )
    yield* runtime.start(id)
    return id
  })

type Server = readonly [kind: "http" | "banner", host: string, port: number]

/**
 * A container with prbox's code-server distribution mounted (its Node runs
 * the relay) and a relay port, with `servers` listening in it.
 */
const withRelay = (servers: ReadonlyArray<Server>) =>
  Effect.gen(function* () {
    const dist = yield* ensureCodeServerDistribution({ dir: distDir, onProgress: () => Effect.void })
    const node = `${CODE_SERVER_MOUNT}/${dist.node}`
    const id = yield* sandbox({
      binds: [{ hostPath: dist.root, containerPath: CODE_SERVER_MOUNT, readOnly: true }],
      relayPort: PREVIEW_RELAY_PORT
    })
    const access: RelayAccess = { token: randomBytes(32).toString("hex"), node: [node], user: USER }
    for (const [kind, host, port] of servers) yield* startServer(id, node, kind, host, port)
    yield* eventually(listeningByExec(id), (listening) => servers.every(([, , port]) => listening.includes(port)))
    return { id, access }
  })

const sh = (id: string, script: string, user = USER) =>
  Effect.flatMap(ContainerRuntime, (runtime) =>
    runtime.exec(id, ["sh", "-c", script], { user, cwd: "/tmp", timeoutMs: 10_000, maxOutputBytes: 1 << 20 })
  )

/** What listens in the container, read with an exec: the test's view, independent of the relay. */
const listeningByExec = (id: string) =>
  Effect.flatMap(sh(id, "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"), (outcome) =>
    Effect.fromNullishOr(listeningPorts(outcome.stdout + outcome.stderr)).pipe(Effect.orDie)
  )

/** `effect` again until its result passes `done` (polled: the container's processes are not ours to latch). */
const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (value: A) => boolean) =>
  effect.pipe(Effect.filterOrFail(done), Effect.retry({ schedule: Schedule.spaced(50), times: 200 }), Effect.orDie)

/** Starts, in the background, a Node server answering `/path` with "<port> <path>" (HTTP) or a banner (raw TCP). */
const startServer = (id: string, node: string, kind: "http" | "banner", host: string, port: number) => {
  const program =
    kind === "http"
      ? `require("http").createServer((q, s) => s.end("${port} " + q.url)).listen(${port}, "${host}")`
      : `require("net").createServer((s) => s.end("banner ${port}\\n")).listen(${port}, "${host}")`
  return sh(id, `${node} -e '${program}' >/dev/null 2>&1 & echo $! > /tmp/server-${port}.pid`)
}

/** Writes `request` and reads until the app closes. */
const exchange = (stream: PortStream, request: string) =>
  Effect.suspend(() => {
    stream.socket.end(request)
    return readToEnd(stream)
  }).pipe(
    Effect.mapError((reason) => new Error(reason)),
    Effect.ensuring(Effect.sync(() => stream.socket.destroy()))
  )

const httpGet = (path: string) => `GET ${path} HTTP/1.1\r\nHost: app\r\nConnection: close\r\n\r\n`

// The relay's processes: their argv holds the relay's source (the pattern is split so this shell's own does not match).
const relayPids = (id: string) =>
  Effect.map(
    sh(
      id,
      'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "PRBOX""-RELAY/1"; then basename $p; fi; done'
    ),
    (outcome) => (outcome.stdout + outcome.stderr).split("\n").filter((line) => line.length > 0)
  )

layer(runtimeLayer, { excludeTestServices: true })("the preview relay in a real container", (it) => {
  it.effect(
    "is started on first use and reaches apps on 0.0.0.0 and on 127.0.0.1 only, losing no byte after `ok`",
    () =>
      Effect.gen(function* () {
        const runtime = yield* ContainerRuntime
        const { id, access } = yield* withRelay([
          ["http", "0.0.0.0", 3000],
          ["http", "127.0.0.1", 3001],
          ["banner", "127.0.0.1", 3002]
        ])
        assert.deepStrictEqual(yield* relayPids(id), [])

        const wide = yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/wide?x=1"))
        assert.match(wide, /^HTTP\/1\.1 200 OK\r\n/)
        assert.isTrue(wide.endsWith("\r\n\r\n3000 /wide?x=1"), wide)
        assert.lengthOf(yield* relayPids(id), 1)

        const loopback = yield* exchange(yield* runtime.connect(id, 3001, access), httpGet("/only-here"))
        assert.isTrue(loopback.endsWith("\r\n\r\n3001 /only-here"), loopback)

        // The app speaks first: its bytes may share a packet with the relay's `ok`.
        const banner = yield* exchange(yield* runtime.connect(id, 3002, access), "")
        assert.strictEqual(banner, "banner 3002\n")

        const closed = yield* Effect.flip(runtime.connect(id, 3999, access))
        assert.deepStrictEqual([closed._tag, closed._tag === "PortClosed" && closed.port], ["PortClosed", 3999])
      }).pipe(bounded("relay round trips", 120))
  )

  it.effect("refuses a wrong token without echoing it", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([["http", "0.0.0.0", 3000]])
      // The relay runs with the right token: a request with another one is denied.
      yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/"))
      const forged = `forged-${randomBytes(8).toString("hex")}`
      const denied = yield* Effect.flip(runtime.connect(id, 3000, { ...access, token: forged }))
      assert.strictEqual(denied._tag, "RuntimeError")
      assert.notInclude(JSON.stringify(denied), forged)
      assert.notInclude(denied.message, access.token)
      const listing = yield* Effect.flip(runtime.listeningPorts(id, { ...access, token: forged }))
      assert.strictEqual(listing._tag, "RuntimeError")
    }).pipe(bounded("wrong token", 120))
  )

  it.effect("lists the ports listening inside, and a stopped server goes from the list", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([
        ["http", "0.0.0.0", 3000],
        ["http", "127.0.0.1", 3001]
      ])
      const before = yield* runtime.listeningPorts(id, access)
      assert.includeMembers([...before], [3000, 3001, PREVIEW_RELAY_PORT])
      assert.deepStrictEqual(
        before,
        [...before].sort((a, b) => a - b)
      )

      yield* sh(id, "kill $(cat /tmp/server-3001.pid)")
      const after = yield* eventually(runtime.listeningPorts(id, access), (ports) => !ports.includes(3001))
      assert.include([...after], 3000)
    }).pipe(bounded("listening ports", 120))
  )

  it.effect("starts the relay again after it is killed, and after the container restarts on a new port", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([["http", "127.0.0.1", 3000]])
      yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/first"))
      const [first] = yield* relayPids(id)
      assert.isDefined(first)

      yield* sh(id, `kill ${first}`)
      yield* eventually(listeningByExec(id), (ports) => !ports.includes(PREVIEW_RELAY_PORT))
      const again = yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/again"))
      assert.isTrue(again.endsWith("3000 /again"), again)
      const restarted = yield* relayPids(id)
      assert.lengthOf(restarted, 1)
      assert.notStrictEqual(restarted[0], first)

      // A restart publishes the relay elsewhere; the runtime finds it and starts the relay there.
      yield* runtime.stop(id)
      yield* runtime.start(id)
      const closed = yield* Effect.flip(runtime.connect(id, 3000, access))
      assert.strictEqual(closed._tag, "PortClosed")
    }).pipe(bounded("relay restarts", 120))
  )

  it.effect("says a container made without a relay port has no previews, and how to get them", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const id = yield* sandbox({ image: healthzTag, entrypoint: ["sh", "-c", "exec sleep 3600"] })
      const access: RelayAccess = { token: "unused", node: ["node"], user: USER }
      const failure = yield* Effect.flip(runtime.connect(id, 3000, access))
      assert.strictEqual(failure._tag, "PreviewUnavailable")
      assert.include(failure.message, "made before previews: `prbox rebuild` gives it them")
      const listing = yield* Effect.flip(runtime.listeningPorts(id, access))
      assert.strictEqual(listing._tag, "PreviewUnavailable")
    })
  )
})
