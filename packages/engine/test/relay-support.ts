import { randomBytes } from "node:crypto"
import * as NodeServices from "@effect/platform-node/NodeServices"
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

/*
 * The preview relay's tests' containers: the code-server test image with
 * prbox's code-server distribution mounted (its Node runs the relay) and
 * servers started in it, on the real engine.
 */

/** Built once by `scripts/setup --with-test-images` (global-setup passes where). */
const distDir = process.env.PRBOX_TEST_CODE_SERVER_DIST ?? ""
export const USER = "1000:1000"

export const runtimeLayer = Layer.mergeAll(
  NodeContainerRuntime.layer.pipe(Layer.provide(NodeDocker.layer())),
  NodeServices.layer
)

/** A running container of `image` that does nothing, removed when the test's scope closes. */
export const sandbox = (overrides: Partial<ContainerSpec>) =>
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

export type Server = readonly [kind: "http" | "banner", host: string, port: number]

/**
 * A container with prbox's code-server distribution mounted (its Node runs
 * the relay) and a relay port, with `servers` listening in it.
 */
export const withRelay = (
  servers: ReadonlyArray<Server>,
  options: { readonly services?: ReadonlyArray<string>; readonly extraHosts?: ReadonlyArray<string> } = {}
) =>
  Effect.gen(function* () {
    const dist = yield* ensureCodeServerDistribution({ dir: distDir, onProgress: () => Effect.void })
    const node = `${CODE_SERVER_MOUNT}/${dist.node}`
    const id = yield* sandbox({
      binds: [{ hostPath: dist.root, containerPath: CODE_SERVER_MOUNT, readOnly: true }],
      relayPort: PREVIEW_RELAY_PORT,
      ...(options.extraHosts === undefined ? {} : { extraHosts: options.extraHosts })
    })
    const access: RelayAccess = {
      token: randomBytes(32).toString("hex"),
      node: [node],
      user: USER,
      ...(options.services === undefined ? {} : { services: options.services })
    }
    for (const [kind, host, port] of servers) yield* startServer(id, node, kind, host, port)
    yield* eventually(listeningByExec(id), (listening) => servers.every(([, , port]) => listening.includes(port)))
    return { id, access }
  })

export const sh = (id: string, script: string, user = USER) =>
  Effect.flatMap(ContainerRuntime, (runtime) =>
    runtime.exec(id, ["sh", "-c", script], { user, cwd: "/tmp", timeoutMs: 10_000, maxOutputBytes: 1 << 20 })
  )

/** What listens in the container, read with an exec: the test's view, independent of the relay. */
export const listeningByExec = (id: string) =>
  Effect.flatMap(sh(id, "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"), (outcome) =>
    Effect.fromNullishOr(listeningPorts(outcome.stdout + outcome.stderr)).pipe(Effect.orDie)
  )

/** `effect` again until its result passes `done` (polled: the container's processes are not ours to latch). */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (value: A) => boolean) =>
  effect.pipe(Effect.filterOrFail(done), Effect.retry({ schedule: Schedule.spaced(50), times: 200 }), Effect.orDie)

/** Starts, in the background, a Node server answering `/path` with "<port> <path>" (HTTP) or a banner (raw TCP). */
export const startServer = (id: string, node: string, kind: "http" | "banner", host: string, port: number) => {
  const program =
    kind === "http"
      ? `require("http").createServer((q, s) => s.end("${port} " + q.url)).listen(${port}, "${host}")`
      : `require("net").createServer((s) => s.end("banner ${port}\\n")).listen(${port}, "${host}")`
  return sh(id, `${node} -e '${program}' >/dev/null 2>&1 & echo $! > /tmp/server-${port}.pid`)
}

/** Writes `request` and reads until the app closes. */
export const exchange = (stream: PortStream, request: string) =>
  Effect.suspend(() => {
    stream.socket.end(request)
    return readToEnd(stream)
  }).pipe(
    Effect.mapError((reason) => new Error(reason)),
    Effect.ensuring(Effect.sync(() => stream.socket.destroy()))
  )

export const httpGet = (path: string) => `GET ${path} HTTP/1.1\r\nHost: app\r\nConnection: close\r\n\r\n`
