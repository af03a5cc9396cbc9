import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describeEvent, type SandboxId } from "@prbox/domain"
import { type PrebuildRepo, SandboxRepo } from "@prbox/store"
import { Clock, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { assert, inject } from "vitest"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { makeRemote, type TestRemote } from "../../git/test/helpers.ts"
import {
  type Config,
  type ContainerRuntime,
  type Engines,
  type Gc,
  type Installation,
  type MakePrebuild,
  type PrboxConfig,
  type PrebuildCleanup,
  type PrebuildSpares,
  type Previews,
  type Reconciler,
  type SandboxFiles,
  type SandboxJobs,
  SandboxService,
  type WarmPool
} from "../src/index.ts"
import { type EngineLayerOptions, engineLayer } from "./engine-layer.ts"
import { removePrebuildsOf } from "./prebuild-cleanup.ts"

export const healthzTag = imageTag(healthzImage)

export interface EngineOptions extends Omit<EngineLayerOptions, "home" | "runId" | "config"> {
  /** Settings over the defaults (the healthz image, a 30 s health timeout). */
  readonly config?: Partial<PrboxConfig>
  /** Prepares the home before the store opens it (e.g. a schema v1 database). */
  readonly seed?: (home: string) => void
}

export interface EngineFixture {
  readonly home: string
  readonly remote: TestRemote
}

const containersOfHome = (home: string): Array<string> =>
  execFileSync("docker", ["ps", "-aq", "--filter", `label=dev.prbox.home=${home}`], { encoding: "utf8" })
    .split("\n")
    .filter((id) => id.length > 0)

/**
 * A private PRBOX_HOME with a local bare remote in it; on release every
 * container of that home is removed and the directory deleted.
 */
export const fixture = Effect.acquireRelease(
  Effect.sync((): EngineFixture => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), "prbox-engine-")))
    return { home, remote: makeRemote(home) }
  }),
  ({ home }) =>
    Effect.sync(() => {
      const left = containersOfHome(home)
      if (left.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...left], { stdio: "ignore" })
      // A Compose sandbox's networks go once its containers are gone.
      const networks = execFileSync("docker", ["network", "ls", "-q", "--filter", `label=dev.prbox.home=${home}`], {
        encoding: "utf8"
      })
        .split("\n")
        .filter((id) => id.length > 0)
      if (networks.length > 0) execFileSync("docker", ["network", "rm", ...networks], { stdio: "ignore" })
      rmSync(home, { recursive: true, force: true })
    })
)

/**
 * Runs `body` against a real engine: SQLite in a temp home, the real Docker
 * engine with the healthz image, real git against a local bare remote.
 */
export const withEngine = <A, E>(
  options: EngineOptions,
  body: (
    fixture: EngineFixture
  ) => Effect.Effect<
    A,
    E,
    | SandboxService
    | SandboxFiles
    | SandboxJobs
    | SandboxRepo
    | ContainerRuntime
    | Reconciler
    | Gc
    | Config
    | Engines
    | Installation
    | MakePrebuild
    | PrebuildCleanup
    | PrebuildSpares
    | PrebuildRepo
    | Previews
    | WarmPool
  >
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const env = yield* fixture
      options.seed?.(env.home)
      const { seed: _seed, config, ...wrappers } = options
      return yield* body(env).pipe(
        Effect.provide(
          engineLayer({
            ...wrappers,
            home: env.home,
            runId: inject("testRunId"),
            config: { image: healthzTag, ...config }
          })
        ),
        // A test that reads config.json gets its defaults (prebuilds on, a pool): its opens prebuild in the background.
        Effect.ensuring(options.configFile === true ? removePrebuildsOf(env.home) : Effect.void)
      )
    })
  )

/** Opens PR `pr` of `input` and waits for its worker: the row as it then stands. */
export const openSettled = (input: string, pr: number) =>
  Effect.gen(function* () {
    const sandboxes = yield* SandboxService
    const opened = yield* sandboxes.open({ input, pr })
    yield* sandboxes.awaitIdle(opened.id)
    return yield* rowOf(opened.id)
  })

/** The same, for a sandbox the test needs running (its error, if not, names why). */
export const openRunning = (input: string, pr: number) =>
  Effect.tap(openSettled(input, pr), (row) =>
    Effect.sync(() => assert.strictEqual(row.status, "running", row.error ?? ""))
  )

/** The row as stored now (fails the test when it is gone). */
export const rowOf = (id: Parameters<SandboxRepo["Service"]["findById"]>[0]) =>
  Effect.flatMap(SandboxRepo, (repo) => repo.findById(id)).pipe(Effect.map(Option.getOrThrow))

const dockerLines = (args: ReadonlyArray<string>): Array<string> =>
  execFileSync("docker", args, { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/** Full ids of the containers labelled as this sandbox's; `all` includes stopped ones. */
export const containersOf = (sandboxId: string, options: { readonly all: boolean }): Array<string> =>
  dockerLines([
    "ps",
    ...(options.all ? ["-a"] : []),
    "-q",
    "--no-trunc",
    "--filter",
    `label=dev.prbox.sandbox=${sandboxId}`
  ])

export interface Inspected {
  readonly Id: string
  readonly Config: {
    readonly User: string
    readonly Env: ReadonlyArray<string> | null
    readonly Cmd: ReadonlyArray<string> | null
    readonly Entrypoint: ReadonlyArray<string> | null
    readonly Labels: Readonly<Record<string, string>>
  }
  readonly Args: ReadonlyArray<string>
  readonly Path: string
  readonly State: { readonly Running: boolean; readonly StartedAt: string }
  readonly Mounts: ReadonlyArray<{ readonly Destination: string; readonly RW: boolean }>
  readonly HostConfig: {
    readonly Privileged: boolean
    readonly CapAdd: ReadonlyArray<string> | null
    readonly CapDrop: ReadonlyArray<string> | null
    readonly PortBindings: Readonly<
      Record<string, ReadonlyArray<{ readonly HostIp: string; readonly HostPort: string }>>
    >
  }
}

/** `docker inspect` of one container. */
export const inspectContainer = (containerId: string): Inspected => {
  const [info] = JSON.parse(execFileSync("docker", ["inspect", containerId], { encoding: "utf8" })) as Array<Inspected>
  if (info === undefined) throw new Error(`docker inspect ${containerId} returned nothing`)
  return info
}

export const docker = (...args: ReadonlyArray<string>): void => {
  execFileSync("docker", args, { stdio: "ignore" })
}

/** Bounds a wait whose end is expected; a hang becomes a clear failure instead of a test timeout. */
export const bounded =
  (what: string, seconds = 20) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.timeoutOrElse(effect, {
      duration: `${seconds} seconds`,
      orElse: () => Effect.die(new Error(`${what} (no end after ${seconds} s)`))
    })

/** The statuses the sandbox went through, in order, from its log. */
export const statusTrail = (id: SandboxId) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(id, { limit: 10_000 })).pipe(
    Effect.map((events) => events.flatMap((event) => (event._tag === "StatusChanged" ? [event.status] : [])))
  )

/** The sandbox's progress log as its lines read (`prbox logs`). */
export const logLines = (id: SandboxId) =>
  Effect.flatMap(SandboxService, (sandboxes) => sandboxes.logs(id, { limit: 1000 })).pipe(
    Effect.map((events) => events.map(describeEvent))
  )

/** Runs `effect` with the clock moved `ms` past the real now (gc's decisions read the clock). */
export const later = <A, E, R>(ms: number, effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.andThen(TestClock.setTime(now + ms), effect).pipe(Effect.provide(TestClock.layer()))
  )

/** Files below `dir` (any depth) whose bytes contain `needle`. */
export const filesContaining = (dir: string, needle: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name))
        .filter((path) => readFileSync(path).includes(needle))
    : []
