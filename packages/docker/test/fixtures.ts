import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:net"
import { Effect, Schedule } from "effect"
import { inject } from "vitest"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { type ContainerSpec, Docker } from "../src/index.ts"

/** Built by `scripts/setup --with-test-images`; tests only compute its tag. */
export const healthzTag = imageTag(healthzImage)

export const uniqueName = (prefix: string): string => `prbox-test-${prefix}-${randomBytes(4).toString("hex")}`

/** A healthz container spec carrying this run's label, so the run can prove it left nothing behind. */
export const healthzSpec = (overrides: Partial<ContainerSpec> = {}): ContainerSpec => ({
  name: uniqueName("docker"),
  image: healthzTag,
  env: {},
  binds: [],
  exposedPort: 8080,
  ...overrides,
  labels: { ...overrides.labels, [TEST_RUN_LABEL]: inject("testRunId") }
})

/** Creates a container that is removed when the test's scope closes, whatever the test's outcome. */
export const scopedContainer = (spec: ContainerSpec) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    return yield* Effect.acquireRelease(docker.createContainer(spec), ({ id }) =>
      docker.remove(id, { force: true, volumes: true }).pipe(
        Effect.catchTag("ContainerNotFound", () => Effect.void),
        Effect.orDie
      )
    )
  })

/** Creates and starts a healthz container and returns its id and published port once /healthz answers. */
export const runningHealthz = (overrides: Partial<ContainerSpec> = {}) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    const { id } = yield* scopedContainer(healthzSpec(overrides))
    yield* docker.start(id)
    const { hostPort } = yield* docker.inspect(id)
    if (hostPort === undefined) return yield* Effect.die(new Error("started container has no published port"))
    yield* httpGet(hostPort, "/healthz").pipe(
      Effect.filterOrFail((response) => response.status === 200),
      Effect.retry({ schedule: Schedule.spaced(25), times: 200 })
    )
    return { id, port: hostPort }
  })

export const httpGet = (port: number, path: string, init: RequestInit = {}) =>
  Effect.tryPromise(() => fetch(`http://127.0.0.1:${port}${path}`, { redirect: "manual", ...init }))

/** A port nothing listens on right now. */
export const freePort = Effect.callback<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** A port held by a listener on 127.0.0.1 until the test's scope closes. */
export const listening = Effect.acquireRelease(
  Effect.callback<Server>((resume) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
  }),
  (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
).pipe(
  Effect.map((server) => {
    const address = server.address()
    return typeof address === "object" && address !== null ? address.port : 0
  })
)
