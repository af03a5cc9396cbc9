/**
 * The real engine on a given home, with optional wrappers around its parts
 * (latches, fault injection, observation). No vitest import: the crash test's
 * child process (a plain Node process) builds it too.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { NodeDocker } from "@prbox/docker"
import { NodeGit, Workspaces } from "@prbox/git"
import { layer as sqliteRepo } from "@prbox/store"
import { type Context, Effect, Layer } from "effect"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import {
  AccountIdentity,
  Config,
  ContainerRuntime,
  type ContainerRuntimeShape,
  DockerRuntime,
  Gc,
  Hooks,
  type HooksShape,
  Lifecycle,
  type LifecycleShape,
  type PrboxConfig,
  Reconciler,
  SandboxService,
  SandboxServiceLive
} from "../src/index.ts"

export type WorkspacesShape = Workspaces["Service"]

export interface EngineLayerOptions {
  readonly home: string
  /** The test run's id: every container gets `dev.prbox.test-run=<runId>`. */
  readonly runId: string
  /** The image and other settings; ignored with `configFile`. */
  readonly config: Partial<PrboxConfig>
  /** Read `<home>/config.json` as the daemon does, instead of `config`. */
  readonly configFile?: boolean
  /** Account discovery the test controls (hosted APIs are unreachable here). */
  readonly identity?: Layer.Layer<AccountIdentity>
  readonly runtime?: (real: ContainerRuntimeShape) => ContainerRuntimeShape
  readonly workspaces?: (real: WorkspacesShape) => WorkspacesShape
  readonly hooks?: (real: HooksShape) => HooksShape
  readonly lifecycle?: (real: LifecycleShape) => LifecycleShape
}

/** A layer of `tag` whose service is `wrap` applied to the one `real` provides. */
const wrapped = <I, S, E, R>(
  tag: Context.Service<I, S>,
  real: Layer.Layer<I, E, R>,
  wrap: ((service: S) => S) | undefined
): Layer.Layer<I, E, R> =>
  Layer.effect(
    tag,
    Effect.map(tag, (service) => wrap?.(service) ?? service)
  ).pipe(Layer.provide(real))

/** SandboxService, Gc, Reconciler, Lifecycle, the store, the runtime, git, hooks and config on `options.home`. */
export const engineLayer = (options: EngineLayerOptions) => {
  const workspaces = Workspaces.layer({ stateDir: options.home }).pipe(
    Layer.provide(Layer.mergeAll(NodeGit.layer, NodeFileSystem.layer))
  )
  const services = Layer.effect(
    SandboxService,
    SandboxServiceLive.make({ labels: { [TEST_RUN_LABEL]: options.runId } })
  ).pipe(
    Layer.provideMerge(Reconciler.layer),
    Layer.provideMerge(wrapped(Lifecycle, Lifecycle.layer, options.lifecycle)),
    Layer.provideMerge(
      Layer.mergeAll(
        options.identity ?? AccountIdentity.unavailable,
        sqliteRepo({ stateDir: options.home }),
        wrapped(ContainerRuntime, DockerRuntime.layer.pipe(Layer.provide(NodeDocker.layer())), options.runtime),
        wrapped(Workspaces, workspaces, options.workspaces),
        wrapped(Hooks, Hooks.layer, options.hooks),
        options.configFile === true
          ? Config.layer({ home: options.home })
          : Config.layerStatic(options.home, { healthTimeoutSeconds: 30, ...options.config })
      )
    )
  )
  return Gc.layer.pipe(Layer.provideMerge(services))
}
