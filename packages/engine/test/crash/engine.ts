/**
 * The real engine on an existing home, built the way test/harness.ts builds
 * it, but without vitest: the crash child (a plain Node process) and the
 * parent test (which reopens the home the child was killed in) both use it.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { NodeDocker } from "@prbox/docker"
import { NodeGit, Workspaces } from "@prbox/git"
import { layer as sqliteRepo } from "@prbox/store"
import { Effect, Layer } from "effect"
import {
  AccountIdentity,
  Config,
  ContainerRuntime,
  type ContainerRuntimeShape,
  DockerRuntime,
  Hooks,
  Reconciler,
  SandboxService,
  SandboxServiceLive
} from "../../src/index.ts"
import { Lifecycle, type LifecycleShape } from "../../src/Lifecycle.ts"

/** Same value as scripts/testing/global-setup.ts's TEST_RUN_LABEL (that module imports vitest). */
export const TEST_RUN_LABEL = "dev.prbox.test-run"

export type WorkspacesShape = Workspaces["Service"]

export interface CrashEngineOptions {
  readonly home: string
  /** The test run's id: every container gets `dev.prbox.test-run=<runId>`. */
  readonly runId: string
  /** The healthz image's tag. */
  readonly image: string
  readonly runtime?: (real: ContainerRuntimeShape) => ContainerRuntimeShape
  readonly workspaces?: (real: WorkspacesShape) => WorkspacesShape
  readonly lifecycle?: (real: LifecycleShape) => LifecycleShape
}

/** SandboxService, Reconciler, Lifecycle, the store, the runtime and the rest, on `options.home`. */
export const engineLayer = (options: CrashEngineOptions) => {
  const runtime = Layer.effect(
    ContainerRuntime,
    Effect.map(ContainerRuntime, (real) => ContainerRuntime.of(options.runtime?.(real) ?? real))
  ).pipe(Layer.provide(DockerRuntime.layer), Layer.provide(NodeDocker.layer()))
  const workspaces = Layer.effect(
    Workspaces,
    Effect.map(Workspaces, (real) => Workspaces.of(options.workspaces?.(real) ?? real))
  ).pipe(
    Layer.provide(Workspaces.layer({ stateDir: options.home })),
    Layer.provide(Layer.mergeAll(NodeGit.layer, NodeFileSystem.layer))
  )
  const lifecycle = Layer.effect(
    Lifecycle,
    Effect.map(Lifecycle, (real) => Lifecycle.of(options.lifecycle?.(real) ?? real))
  ).pipe(Layer.provide(Lifecycle.layer))
  return Layer.effect(SandboxService, SandboxServiceLive.make({ labels: { [TEST_RUN_LABEL]: options.runId } })).pipe(
    Layer.provideMerge(Reconciler.layer),
    Layer.provideMerge(lifecycle),
    Layer.provideMerge(
      Layer.mergeAll(
        AccountIdentity.unavailable,
        sqliteRepo({ stateDir: options.home }),
        runtime,
        workspaces,
        Hooks.layer,
        Config.layerStatic(options.home, { image: options.image, healthTimeoutSeconds: 30 })
      )
    )
  )
}
