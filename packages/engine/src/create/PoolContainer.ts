import {
  type EnvironmentPlan,
  healthProbePause,
  type Prebuild,
  posixPath,
  previewUrlTemplate,
  type SandboxEnvironment,
  type SandboxId
} from "@prbox/domain"
import { PoolRepo, SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, FileSystem, Layer, Redacted, Ref } from "effect"
import { CodeServerHealth } from "../CodeServerHealth.ts"
import { codeServerSpec } from "../CodeServerSpec.ts"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels, LABELS, userSpec } from "../ContainerSpec.ts"
import { SetupFailed } from "../Errors.ts"
import { type ExtensionInstall, InstallExtensions } from "../environment/Extensions.ts"
import { Foreground } from "../Foreground.ts"
import { Installation } from "../Installation.ts"
import { PreviewAddress } from "../PreviewAddress.ts"
import { MakePrebuild } from "../prebuild/MakePrebuild.ts"
import { prebuildHomeVolumeName } from "../prebuild/PrebuildNames.ts"
import { afterPrebuild } from "../prebuild/PrebuildSteps.ts"
import { newPassword, newSandboxId } from "../SandboxIds.ts"
import { SandboxTools } from "../SandboxTools.ts"
import { Ownership, removeSandboxFolders } from "../workspace/Ownership.ts"
import { GitIdentity } from "./GitIdentity.ts"
import { extensionsInput, setupUser } from "./Setup.ts"
import { probeDue } from "./StepOrder.ts"
import { type ProbedEnv, probeUserEnv } from "./UserEnv.ts"

/** What a pool container did for its claim that no PR decides: the user's environment probed, the extensions installed. */
export interface DoneForClaim {
  readonly probed?: ProbedEnv
  readonly extensions?: ReadonlyArray<ExtensionInstall>
}

/** What a pool container is made of: a ready prebuild (its volume) and the environment an open of its key recorded. */
export interface PoolInput {
  readonly prebuild: Prebuild & { readonly volume: string }
  readonly environment: SandboxEnvironment
  readonly plan: EnvironmentPlan
}

/**
 * One pool container made or removed. Made: its entry first (`making`, its
 * sandbox id and random password), then its folders, its workspace filled
 * from the prebuild's volume by the engine (the base's checkout, no PR's
 * code), its container (the sandbox's spec, the user's limits, its own port,
 * labelled `dev.prbox.pool` and never `dev.prbox.pr`) sealed and started,
 * code-server answering, and what a claim would otherwise do that no PR
 * decides: the user's git identity written, the user's environment probed
 * for the claim's steps and the environment's extensions installed (what
 * was done kept here for the claim: `doneFor`); only then
 * `ready`. A failure removes what it made.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const pool = yield* PoolRepo
  const sandboxes = yield* SandboxRepo
  const ownership = yield* Ownership
  const extraLabels = yield* ExtraLabels
  const health = yield* CodeServerHealth
  const tools = yield* SandboxTools
  const makePrebuild = yield* MakePrebuild
  const foreground = yield* Foreground
  /** Low priority: each step of a make waits while an open or a claim runs. */
  const paused = foreground.whenIdle(Effect.logInfo("warm pool: paused while an open runs"))
  const fs = yield* FileSystem.FileSystem
  const engineHome = (yield* Config).home
  const install = (yield* Installation).id
  const previewPort = (yield* PreviewAddress).port
  const gitIdentity = yield* GitIdentity
  const installExtensions = yield* InstallExtensions
  /** What each pool container of this daemon did for its claim (lost with the daemon: a claim then does it). */
  const done = yield* Ref.make<ReadonlyMap<SandboxId, DoneForClaim>>(new Map())
  const record = (id: SandboxId, part: DoneForClaim) =>
    Ref.update(done, (map) => new Map(map).set(id, { ...map.get(id), ...part }))
  const forget = (id: SandboxId) =>
    Ref.modify(done, (map): [DoneForClaim, ReadonlyMap<SandboxId, DoneForClaim>] => {
      const next = new Map(map)
      next.delete(id)
      return [map.get(id) ?? {}, next]
    })

  /** Ports sandboxes and other pool entries keep. */
  const keptPorts = Effect.gen(function* () {
    const rows = yield* sandboxes.findAll()
    const entries = yield* pool.list
    return new Set([...rows, ...entries].flatMap((each) => (each.hostPort === null ? [] : [each.hostPort])))
  })

  const waitHealthy = (hostPort: number, config: PrboxConfig) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      while (true) {
        if ((yield* Effect.result(health.probe(hostPort)))._tag === "Success") return
        const now = yield* Clock.currentTimeMillis
        if (now - started >= config.healthTimeoutSeconds * 1000) {
          return yield* new SetupFailed({
            reason: `code-server did not answer within ${config.healthTimeoutSeconds} s`
          })
        }
        yield* Effect.sleep(healthProbePause(now - started, false))
      }
    })

  /** The pool container of `id`, its carried files and its folders removed (its entry is the caller's). */
  const remove = Effect.fn("WarmPool.remove")(function* (id: SandboxId, workspacePath: string | null) {
    yield* forget(id)
    const listed = yield* runtime.listByLabel({ [LABELS.sandbox]: id, [LABELS.install]: install })
    yield* Effect.forEach(listed, (container) => runtime.destroy(container.containerId), { discard: true })
    const files = yield* runtime.listFilesByLabel({ [LABELS.sandbox]: id, [LABELS.install]: install })
    yield* Effect.forEach(files, (each) => runtime.removeFiles(each.name), { discard: true })
    yield* removeSandboxFolders(fs, ownership.foldersOf(id, workspacePath), Effect.succeed(runtime), extraLabels)
  })

  const build = (id: SandboxId, password: Redacted.Redacted<string>, input: PoolInput, config: PrboxConfig) =>
    Effect.gen(function* () {
      const { prebuild, plan } = input
      const folders = ownership.foldersOf(id, null)
      yield* ownership.makeFolders(folders)
      const workspace = folders.workspace
      const fill = (volume: string, folder: string) =>
        runtime.fillFolder(volume, posixPath.dirname(folder), posixPath.basename(folder), extraLabels)
      yield* paused
      // As an open from the prebuild: its workspace, and its home and image where it kept them (what the steps changed outside the workspace).
      yield* makePrebuild.using(
        prebuild.id,
        Effect.all(
          [
            fill(prebuild.volume, workspace),
            prebuild.image === null ? Effect.void : fill(prebuildHomeVolumeName(prebuild.id), folders.home)
          ],
          { concurrency: 2, discard: true }
        )
      )
      const distribution = plan.codeServer === "included" ? null : yield* tools.codeServer(() => Effect.void)
      const hostPort = yield* Effect.flatMap(keptPorts, runtime.freePort)
      const row = {
        id,
        accessPassword: password,
        host: prebuild.host,
        repository: prebuild.repository,
        workspacePath: workspace,
        pullRequest: null,
        pool: prebuild.key
      }
      const spec = codeServerSpec({
        row,
        config,
        // Its container only: the entry, and the row a claim makes of it, keep the environment's own image.
        plan: prebuild.image === null ? plan : { ...plan, image: prebuild.image },
        distribution,
        user: userSpec(ownership.sandboxUser),
        homePath: folders.home,
        sockets: yield* ownership.makeSockets(folders),
        engineHome,
        install,
        extraLabels,
        hostPort,
        previewUrlTemplate: previewUrlTemplate(id, previewPort)
      })
      yield* paused
      const containerId = yield* runtime.provision(spec)
      // The host's last look inside: from here on the container may run (no PR's code is in it yet).
      yield* ownership.seal(folders, runtime, extraLabels)
      yield* paused
      const port = yield* runtime.start(containerId)
      // A claim's work that is the user's, not a PR's, done while code-server starts.
      const user = setupUser(plan, ownership.sandboxUser)
      const warn = (line: string) => Effect.logWarning(`warm pool: ${id}: ${line}`)
      const claimPlan = afterPrebuild(plan)
      const extensions =
        plan.extensions.length === 0
          ? Effect.void
          : Effect.flatMap(
              installExtensions(
                extensionsInput(containerId, distribution, plan, user, (line) =>
                  Effect.logInfo(`warm pool: ${id}: ${line}`)
                )
              ),
              (outcomes) => record(id, { extensions: outcomes })
            ).pipe(
              // Not recorded: the claim installs them.
              Effect.catch((error) => warn(`its extensions could not be installed: ${error.message}`))
            )
      const userWork = Effect.all(
        [
          Effect.flatMap(gitIdentity.values(config), (identity) =>
            gitIdentity.write(containerId, plan, user, identity, warn)
          ),
          probeDue(claimPlan, true, config)
            ? Effect.flatMap(
                probeUserEnv(runtime, containerId, user, claimPlan, config.userEnvProbeTimeoutSeconds),
                (probed) => record(id, { probed })
              )
            : Effect.void,
          extensions
        ],
        { discard: true }
      )
      yield* Effect.all([waitHealthy(port, config), userWork], { concurrency: 2, discard: true })
      return { containerId, port, workspace }
    })

  /** Makes one pool container of `input` (`registered` hears its id before its entry is written); its id once ready, undefined when it was removed meanwhile. */
  const makeOne = Effect.fn("WarmPool.makeOne")(function* (
    input: PoolInput,
    config: PrboxConfig,
    registered: (id: SandboxId) => Effect.Effect<void>
  ) {
    const id = newSandboxId()
    yield* registered(id)
    const password = Redacted.make(newPassword())
    const { prebuild } = input
    yield* pool.insert({
      id,
      key: prebuild.key,
      prebuildId: prebuild.id,
      baseCommit: prebuild.baseCommit,
      host: prebuild.host,
      repository: prebuild.repository,
      accessPassword: password,
      workspacePath: ownership.foldersOf(id, null).workspace,
      environment: input.environment,
      environmentPlan: input.plan,
      createdAt: yield* Clock.currentTimeMillis
    })
    const built = yield* build(id, password, input, config).pipe(
      Effect.onError(() => Effect.ignore(Effect.andThen(pool.take(id), remove(id, null))))
    )
    if (yield* pool.ready(id, built.containerId, built.port)) return id
    yield* remove(id, built.workspace)
    return undefined
  })

  /** What pool container `id` did for its claim, handed over once (nothing: made by an earlier daemon, or not due). */
  const doneFor = (id: SandboxId) => forget(id)

  return { makeOne, remove, doneFor }
})

export class PoolContainer extends Context.Service<PoolContainer, Effect.Success<typeof make>>()(
  "prbox/engine/PoolContainer"
) {
  static readonly layer = Layer.effect(PoolContainer, make)
}
