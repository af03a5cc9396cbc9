/**
 * The engine on one `$PRBOX_HOME`, composed once: the daemon, the engine's
 * tests and the benchmarks all build it here (tests and benches wrap parts).
 */

import { homedir } from "node:os"
import type { ChosenEngine } from "@prbox/domain"
import { Git, NodeGit, NodePullRequests, NodeWorkspaces, type PullRequests, Workspaces } from "@prbox/git"
import { NodeOciRegistry } from "@prbox/registry"
import { PoolRepo, PrebuildRepo, SandboxRepo, layer as sqliteRepo } from "@prbox/store"
import { type Context, Effect, Layer } from "effect"
import type { AccountIdentity } from "../AccountIdentity.ts"
import { CodeServerHealth } from "../CodeServerHealth.ts"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels } from "../ContainerSpec.ts"
import { GitIdentity } from "../create/GitIdentity.ts"
import { PoolContainer } from "../create/PoolContainer.ts"
import { WarmPool } from "../create/WarmPool.ts"
import { InstallExtensions } from "../environment/Extensions.ts"
import { Foreground } from "../Foreground.ts"
import { FeaturePins } from "../features/FeaturePins.ts"
import * as NodeFeatureDownloads from "../features/node/NodeFeatureDownloads.ts"
import * as NodeSandboxFiles from "../files/node/NodeSandboxFiles.ts"
import { Gc } from "../gc/Gc.ts"
import { Hooks } from "../Hooks.ts"
import * as NodeSandboxJobs from "../jobs/node/NodeSandboxJobs.ts"
import { Lifecycle } from "../Lifecycle.ts"
import { MakePrebuild } from "../prebuild/MakePrebuild.ts"
import { PrebuildCleanup } from "../prebuild/PrebuildCleanup.ts"
import { PrebuildSpares } from "../prebuild/PrebuildSpares.ts"
import * as NodePreviews from "../previews/node/NodePreviews.ts"
import { Reconciler } from "../reconcile/Reconciler.ts"
import * as NodeSandboxService from "../sandbox/node/NodeSandboxService.ts"
import * as NodeSsh from "../ssh/node/NodeSsh.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { dockerFor, imageSourceFor } from "./engines/EngineClient.ts"
import { engineOfHome } from "./engines/EngineSelection.ts"
import * as NodeAccountIdentity from "./NodeAccountIdentity.ts"
import * as NodeCodeServerHealth from "./NodeCodeServerHealth.ts"
import * as NodeComposeCli from "./NodeComposeCli.ts"
import * as NodeConfig from "./NodeConfig.ts"
import * as NodeContainerRuntime from "./NodeContainerRuntime.ts"
import * as NodeEngines from "./NodeEngines.ts"
import * as NodeHelperOwner from "./NodeHelperOwner.ts"
import * as NodeHooks from "./NodeHooks.ts"
import * as NodeInstallation from "./NodeInstallation.ts"
import * as NodeLeftoverHelpers from "./NodeLeftoverHelpers.ts"
import * as NodePlatform from "./NodePlatform.ts"
import * as NodePreviewAddress from "./NodePreviewAddress.ts"
import * as NodeRegistryAuth from "./NodeRegistryAuth.ts"
import * as NodeSandboxTools from "./NodeSandboxTools.ts"

type Wrap<S> = (real: S) => S

/** Wrappers around the engine's parts (latches, fault injection, timing); each gets the real service. */
export interface Wrappers {
  readonly runtime?: Wrap<ContainerRuntime["Service"]>
  readonly health?: Wrap<CodeServerHealth["Service"]>
  readonly workspaces?: Wrap<Workspaces["Service"]>
  readonly git?: Wrap<Git["Service"]>
  readonly hooks?: Wrap<Hooks["Service"]>
  readonly lifecycle?: Wrap<Lifecycle["Service"]>
  readonly repo?: Wrap<SandboxRepo["Service"]>
  readonly foreground?: Wrap<Foreground["Service"]>
}

export interface Options {
  readonly home: string
  /** Extra labels on every container (tests and benches label their runs). */
  readonly labels?: Readonly<Record<string, string>>
  /** Fixed settings instead of reading `<home>/config.json` afresh on each use. */
  readonly config?: Partial<PrboxConfig>
  /** Account discovery; by default the Node one (git credential helpers, the code hosts' APIs, STS). */
  readonly identity?: Layer.Layer<AccountIdentity>
  /** What the hosting services say of pull requests; by default the Node one (the services' APIs, the user's credentials). */
  readonly pullRequests?: Layer.Layer<PullRequests>
  /** A folder of prebuilt code-server distributions instead of `<home>/code-server` (tests share one). */
  readonly codeServerDir?: string
  /** The engine to use instead of choosing it (config.json's `runtime`, DOCKER_HOST, the Docker context). */
  readonly engine?: ChosenEngine
  /** How long an open holds the foreground past its `running` (Foreground.ts; tests pass 0). */
  readonly settleAfterOpenMs?: number
  readonly wrap?: Wrappers
}

/** A layer of `tag` whose service is `wrap` applied to the one `real` provides. */
const wrapped = <I, S, E, R>(
  tag: Context.Service<I, S>,
  real: Layer.Layer<I, E, R>,
  wrap: Wrap<S> | undefined
): Layer.Layer<I, E, R> =>
  wrap === undefined ? real : Layer.effect(tag, Effect.map(tag, wrap)).pipe(Layer.provide(real))

const configLayer = (options: Options) =>
  options.config === undefined
    ? NodeConfig.layer({ home: options.home })
    : Config.layerStatic(options.home, options.config, homedir())

/** The engine new sandboxes are made on: the one given, else engineOfHome's. */
const chooseFor = (options: Options) =>
  Effect.gen(function* () {
    if (options.engine !== undefined) return options.engine
    const { chosen, configProblem } = yield* engineOfHome(yield* Config)
    if (configProblem !== undefined) yield* Effect.logWarning(`engine chosen without config.json: ${configProblem}`)
    return chosen
  }).pipe(Effect.provide(Layer.provideMerge(configLayer(options), NodePlatform.layer)))

/**
 * SandboxService, SandboxJobs, Lifecycle, Reconciler and Gc over SQLite in `home`, the
 * Docker engine config.json, DOCKER_HOST or the Docker context names (see
 * chooseFor), git workspaces, the user's hooks and config, and the user's
 * Docker credentials for the registries config.json lists (RegistryAuth). Closing the layer
 * interrupts the workers, then closes the database.
 */
export const layer = (options: Options) =>
  Layer.unwrap(Effect.map(chooseFor(options), (chosen) => compose(options, chosen)))

const compose = (options: Options, chosen: ChosenEngine) => {
  const wrap = options.wrap ?? {}
  const git = wrapped(Git, NodeGit.layer, wrap.git)
  const workspaces = wrapped(
    Workspaces,
    NodeWorkspaces.layer({ stateDir: options.home }).pipe(Layer.provide(git)),
    wrap.workspaces
  )
  // One database connection: the layer is built once though both services come from it.
  const store = sqliteRepo({ stateDir: options.home })
  const config = configLayer(options)
  const docker = dockerFor(chosen.address)
  // This home's and install's helper containers: labelled by the runtime, a killed daemon's removed at start.
  const helperOwner = NodeHelperOwner.layer.pipe(
    Layer.provide([config, NodeInstallation.layer.pipe(Layer.provide(store))])
  )
  const runtime = wrapped(
    ContainerRuntime,
    NodeContainerRuntime.layer.pipe(Layer.provide([docker, imageSourceFor(chosen.address), helperOwner])),
    wrap.runtime
  )
  const registryAuth = NodeRegistryAuth.layer.pipe(Layer.provide(config))
  // One foreground for the engine: every open holds it, every background maker waits on it.
  const foreground = wrapped(Foreground, Foreground.layer(options.settleAfterOpenMs), wrap.foreground)
  const prebuildRepo = Layer.effect(
    PrebuildRepo,
    Effect.map(PrebuildRepo, (repo) => repo)
  ).pipe(Layer.provide(store))
  const parts = Layer.mergeAll(
    options.identity ?? NodeAccountIdentity.layer(),
    options.pullRequests ?? NodePullRequests.layer(),
    wrapped(SandboxRepo, store, wrap.repo),
    prebuildRepo,
    Layer.effect(
      PoolRepo,
      Effect.map(PoolRepo, (repo) => repo)
    ).pipe(Layer.provide(store)),
    // One maker for the engine: its builds go one at a time, whoever asks.
    PrebuildCleanup.layer.pipe(
      Layer.provideMerge(PrebuildSpares.layer),
      Layer.provideMerge(MakePrebuild.layer),
      Layer.provide([
        ExtraLabels.layer(options.labels ?? {}),
        prebuildRepo,
        runtime,
        workspaces,
        config,
        foreground,
        Ownership.layer.pipe(Layer.provide(config))
      ]),
      Layer.provide(NodeInstallation.layer.pipe(Layer.provide(store)))
    ),
    NodePreviewAddress.layer.pipe(Layer.provide(Layer.merge(store, config))),
    runtime,
    wrapped(CodeServerHealth, NodeCodeServerHealth.layer, wrap.health),
    NodeEngines.layer(chosen).pipe(Layer.provide(runtime)),
    NodeInstallation.layer.pipe(Layer.provide(store)),
    NodeLeftoverHelpers.layer.pipe(Layer.provide([docker, helperOwner])),
    NodeSandboxTools.layer({
      home: options.home,
      ...(options.codeServerDir === undefined ? {} : { codeServerDir: options.codeServerDir })
    }).pipe(Layer.provide(runtime)),
    workspaces,
    git,
    wrapped(Hooks, NodeHooks.layer, wrap.hooks),
    registryAuth,
    // Compose reaches the engine new sandboxes are made on, and refuses any but this machine's.
    NodeComposeCli.layer(chosen.address),
    NodeFeatureDownloads.layer.pipe(Layer.provide([NodeOciRegistry.layer(), registryAuth, config])),
    FeaturePins.layer.pipe(Layer.provide(store)),
    foreground,
    config
  )
  // One pool for the engine: its fills go one at a time, and the daemon reconciles and collects it.
  const warmPool = WarmPool.layer.pipe(
    Layer.provideMerge(PoolContainer.layer),
    Layer.provide([
      Ownership.layer,
      ExtraLabels.layer(options.labels ?? {}),
      GitIdentity.layer,
      InstallExtensions.layer
    ])
  )
  const sandboxes = NodeSandboxService.layer.pipe(
    Layer.provide(ExtraLabels.layer(options.labels ?? {})),
    Layer.provideMerge(warmPool),
    Layer.provideMerge(Reconciler.layer),
    Layer.provideMerge(wrapped(Lifecycle, Lifecycle.layer, wrap.lifecycle)),
    Layer.provideMerge(parts)
  )
  const previews = NodePreviews.layer
  const files = NodeSandboxFiles.layer
  const jobs = NodeSandboxJobs.layer.pipe(Layer.provide(store))
  const ssh = NodeSsh.layer({ home: options.home })
  return Layer.mergeAll(Gc.layer, previews, files, jobs, ssh).pipe(
    Layer.provideMerge(sandboxes),
    Layer.provide(NodePlatform.layer)
  )
}
