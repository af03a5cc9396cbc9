import { randomBytes } from "node:crypto"
import { readdirSync, statSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { homedir } from "node:os"
import { join } from "node:path"
import { Effect, Schedule } from "effect"
import { inject } from "vitest"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { type ContainerSpec, Docker } from "../src/index.ts"

/** Built by `scripts/setup --with-test-images`; tests only compute its tag. */
export const healthzTag = imageTag(healthzImage)

/**
 * The newest debootstrapped Debian root filesystem cached on this machine
 * (by the default image's or the code-server test image's recipe), or
 * undefined when neither was ever built here.
 */
export const debianRootfs = (): { readonly path: string; readonly key: string } | undefined => {
  const base = process.env.PRBOX_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "prbox")
  const archives = ["default-image", "code-server-image"].flatMap((name) => {
    const dir = join(base, name)
    try {
      return readdirSync(dir).map((file) => join(dir, file))
    } catch {
      return []
    }
  })
  const newest = archives
    .flatMap((path) => {
      const key = /\/rootfs-([0-9a-f]+)\.tar$/.exec(path)?.[1]
      return key === undefined ? [] : [{ path, key, mtime: statSync(path).mtimeMs }]
    })
    .sort((a, b) => b.mtime - a.mtime)[0]
  return newest === undefined ? undefined : { path: newest.path, key: newest.key }
}

export const debianMissing = "no Debian root filesystem in the prbox cache: run scripts/setup --with-test-images"

/**
 * `prbox-test/debian:<key>`: the cached Debian root filesystem imported as an
 * image, once (kept for later runs and other tests: a Dockerfile's `FROM`
 * when no registry is reachable). Dies when the archive is missing: guard
 * with `debianRootfs()`.
 */
export const debianBase = Effect.gen(function* () {
  const rootfs = debianRootfs()
  if (rootfs === undefined) return yield* Effect.die(new Error(debianMissing))
  const docker = yield* Docker
  const tag = `prbox-test/debian:${rootfs.key}`
  if (yield* docker.imageExists(tag)) return tag
  yield* docker.importImage(
    {
      archivePath: rootfs.path,
      tag,
      changes: ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 'CMD ["/bin/bash"]']
    },
    () => {}
  )
  return tag
})

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
