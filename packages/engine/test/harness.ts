import { execFileSync } from "node:child_process"
import { mkdtempSync, realpathSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { NodeFileSystem } from "@effect/platform-node"
import { NodeDocker } from "@prbox/docker"
import { NodeGit, Workspaces } from "@prbox/git"
import { SandboxRepo, layer as sqliteRepo } from "@prbox/store"
import { Effect, Layer, Option } from "effect"
import { inject } from "vitest"
import { healthzImage } from "../../../scripts/images/healthz.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { makeRemote, type TestRemote } from "../../git/test/helpers.ts"
import {
  Config,
  ContainerRuntime,
  type ContainerRuntimeShape,
  DockerRuntime,
  Hooks,
  type HooksShape,
  type PrboxConfig,
  type SandboxService,
  SandboxServiceLive
} from "../src/index.ts"

export const healthzTag = imageTag(healthzImage)

type WorkspacesShape = Workspaces["Service"]

export interface EngineOptions {
  readonly config?: Partial<PrboxConfig>
  /** Observe or delay the real runtime's calls (latches for interleavings). */
  readonly runtime?: (real: ContainerRuntimeShape) => ContainerRuntimeShape
  readonly workspaces?: (real: WorkspacesShape) => WorkspacesShape
  readonly hooks?: (real: HooksShape) => HooksShape
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
const fixture = Effect.acquireRelease(
  Effect.sync((): EngineFixture => {
    const home = realpathSync(mkdtempSync(join(tmpdir(), "prbox-engine-")))
    return { home, remote: makeRemote(home) }
  }),
  ({ home }) =>
    Effect.sync(() => {
      const left = containersOfHome(home)
      if (left.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...left], { stdio: "ignore" })
      rmSync(home, { recursive: true, force: true })
    })
)

/**
 * Runs `body` against a real engine: SQLite in a temp home, the real Docker
 * engine with the healthz image, real git against a local bare remote.
 */
export const withEngine = <A, E>(
  options: EngineOptions,
  body: (fixture: EngineFixture) => Effect.Effect<A, E, SandboxService | SandboxRepo | ContainerRuntime>
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const env = yield* fixture
      const runtime = Layer.effect(
        ContainerRuntime,
        Effect.map(ContainerRuntime, (real) => ContainerRuntime.of(options.runtime?.(real) ?? real))
      ).pipe(Layer.provide(DockerRuntime.layer), Layer.provide(NodeDocker.layer()))
      const workspaces = Layer.effect(
        Workspaces,
        Effect.map(Workspaces, (real) => Workspaces.of(options.workspaces?.(real) ?? real))
      ).pipe(
        Layer.provide(Workspaces.layer({ stateDir: env.home })),
        Layer.provide(Layer.mergeAll(NodeGit.layer, NodeFileSystem.layer))
      )
      const hooks = Layer.effect(
        Hooks,
        Effect.map(Hooks, (real) => Hooks.of(options.hooks?.(real) ?? real))
      ).pipe(Layer.provide(Hooks.layer))
      const repo = sqliteRepo({ stateDir: env.home })
      const services = SandboxServiceLive.layer({ labels: { [TEST_RUN_LABEL]: inject("testRunId") } }).pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            repo,
            runtime,
            workspaces,
            hooks,
            Config.layerStatic(env.home, { image: healthzTag, healthTimeoutSeconds: 30, ...options.config })
          )
        )
      )
      return yield* body(env).pipe(Effect.provide(services))
    })
  )

/** The row as stored now (fails the test when it is gone). */
export const rowOf = (id: Parameters<SandboxRepo["Service"]["findById"]>[0]) =>
  Effect.flatMap(SandboxRepo, (repo) => repo.findById(id)).pipe(Effect.map(Option.getOrThrow))
