import { PREBUILD_LABELS, type Prebuild, posixPath, type Sandbox } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { PrebuildRepo } from "@prbox/store"
import { Clock, Context, Effect, Layer } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels, userSpec } from "../ContainerSpec.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import type { PrebuildPlan } from "../prebuild/FindPrebuild.ts"
import { MakePrebuild } from "../prebuild/MakePrebuild.ts"
import type { OpenPath } from "../prebuild/PrebuildDecision.ts"
import { prebuildHomeVolumeName } from "../prebuild/PrebuildNames.ts"
import { afterPrebuild } from "../prebuild/PrebuildSteps.ts"
import { checkoutPrebuiltInContainer } from "../workspace/ContainerWorkspaceGit.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { type ContainerEnvironment, CreateContainer } from "./CreateContainer.ts"
import type { StartedEarly } from "./OpenCheckout.ts"

/** Where a new sandbox that starts from a prebuild is going: its PR's head, from the mirror. */
export interface PrebuiltTarget {
  readonly workspacePath: string
  readonly branch: string
  readonly commit: string
  readonly mirrorPath: string
  /** The remote the row records: the workspace's `origin` is set to it. */
  readonly remoteUrl: string
}

/**
 * A new sandbox started from a ready prebuild: its workspace and home
 * filled from the prebuild's volumes by the engine (the host reads nothing
 * a container wrote), its container made from the prebuild's image (what
 * the steps installed outside them) and started, then the PR's commits brought in as a
 * bundle and checked out by the container's git. `onCreateCommand` ran in
 * the prebuild: the container's setup runs the rest (`updateContentCommand`
 * again, so a step that skips unchanged work is fast, then
 * `postCreateCommand` and `postStartCommand`).
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const workspaces = yield* Workspaces
  const prebuilds = yield* PrebuildRepo
  const container = yield* CreateContainer
  const ownership = yield* Ownership
  const extraLabels = yield* ExtraLabels
  const { progress, getRow } = yield* Lifecycle
  const makePrebuild = yield* MakePrebuild

  /** Whether the prebuild's volumes and image are there (a missing one is today's path, never an empty workspace). */
  const usable = (prebuild: Prebuild) =>
    Effect.gen(function* () {
      if (prebuild.volume === null || (yield* runtime.filesAt) !== "host") return false
      const listed = new Set(
        (yield* runtime.listFilesByLabel({ [PREBUILD_LABELS.prebuild]: prebuild.id })).map((volume) => volume.name)
      )
      // One made before prebuilds kept an image (and a home) is its workspace alone.
      if (prebuild.image === null) return listed.has(prebuild.volume)
      const image = yield* runtime.imageInfo(prebuild.image)
      return listed.has(prebuild.volume) && listed.has(prebuildHomeVolumeName(prebuild.id)) && image !== undefined
    }).pipe(Effect.orElseSucceed(() => false))

  const start = (
    cloning: Sandbox,
    config: PrboxConfig,
    environment: ContainerEnvironment,
    prebuild: Prebuild & { readonly volume: string },
    target: PrebuiltTarget
  ) =>
    Effect.gen(function* () {
      const say = (line: string) => progress(cloning, line).pipe(Effect.ignore)
      yield* say(
        `from prebuild ${prebuild.id} (${prebuild.baseBranch} at ${prebuild.baseCommit.slice(0, 7)}): the workspace is filled by the engine`
      )
      const fill = (volume: string, folder: string) =>
        runtime.fillFolder(volume, posixPath.dirname(folder), posixPath.basename(folder), extraLabels)
      const home = ownership.foldersOf(cloning.id, target.workspacePath).home
      yield* makePrebuild.using(
        prebuild.id,
        // The two copies are the engine's, into two folders: side by side.
        Effect.all(
          [
            fill(prebuild.volume, target.workspacePath),
            prebuild.image === null ? Effect.void : fill(prebuildHomeVolumeName(prebuild.id), home)
          ],
          { concurrency: 2, discard: true }
        )
      )
      yield* prebuilds.markUsed(prebuild.id, yield* Clock.currentTimeMillis).pipe(Effect.ignore)
      // onCreateCommand ran in the prebuild; the rest of the create-time steps run in this container.
      const plan = afterPrebuild(environment.plan)
      const prebuilt: ContainerEnvironment = { ...environment, plan }
      // Its container only: the row keeps the environment's own image (a later rebuild starts from it).
      const fromImage = prebuild.image === null ? prebuilt : { ...prebuilt, plan: { ...plan, image: prebuild.image } }
      const started = yield* container.start(cloning.id, config, fromImage, {
        workspacePath: target.workspacePath,
        checkoutHere: Effect.void
      })
      yield* say(`bringing ${target.commit.slice(0, 7)} in as ${target.branch} in the sandbox`)
      const exec: ExecTarget = {
        id: cloning.id,
        containerId: started.containerId,
        user: userSpec(ownership.sandboxUser),
        workspaceFolder: plan.workspaceFolder,
        env: {},
        sourceCommit: target.commit
      }
      yield* checkoutPrebuiltInContainer(runtime, workspaces, exec, target, prebuild.baseCommit)
      return { environment: prebuilt, started } satisfies StartedEarly
    })

  /** The prebuild a new sandbox starts from, if its path says so and it can (an image-only environment, its volume there); the path taken is said. */
  const choose = (cloning: Sandbox, path: OpenPath | undefined, imageOnly: boolean) =>
    Effect.gen(function* () {
      if (path === undefined || path._tag === "Off") return undefined
      const say = (line: string) => progress(cloning, line).pipe(Effect.ignore)
      if (path._tag === "Full") return yield* Effect.as(say(`full path: ${path.reason}`), undefined)
      const { prebuild } = path
      if (!imageOnly || prebuild.volume === null || !(yield* usable(prebuild))) {
        return yield* Effect.as(say(`full path: prebuild ${prebuild.id} cannot be used here`), undefined)
      }
      return { ...prebuild, volume: prebuild.volume }
    })

  /**
   * A prebuild of the base's environment, made after an open of it took the
   * full path (decidePrebuild's background part), from the plan the open
   * recorded; it runs past the open, one at a time (MakePrebuild).
   */
  const background = (row: Sandbox, planned: PrebuildPlan | undefined, mirrorPath: string) =>
    Effect.gen(function* () {
      if (planned === undefined || planned.key === null || planned.base === null) return
      if (planned.decision.background._tag === "Nothing") return
      // The open path copies a prebuild's volume on this machine's engine only: one made elsewhere would never be used.
      if ((yield* runtime.filesAt) !== "host") {
        return yield* progress(
          row,
          "no prebuild made: the engine is remote (prebuilds are made on this machine's engine only)"
        )
      }
      const { environmentPlan, host } = yield* getRow(row.id)
      if (environmentPlan === null) return
      const { branch, commit } = planned.base
      yield* progress(row, `prebuild of ${branch} at ${commit.slice(0, 7)} started in the background`)
      yield* makePrebuild.background({
        key: planned.key,
        host: host ?? "local",
        repository: row.repository,
        baseBranch: branch,
        baseCommit: commit,
        mirrorPath,
        plan: environmentPlan
      })
    }).pipe(Effect.ignore)

  return { choose, start, background }
})

export class OpenFromPrebuild extends Context.Service<OpenFromPrebuild, Effect.Success<typeof make>>()(
  "prbox/engine/OpenFromPrebuild"
) {
  static readonly layer = Layer.effect(OpenFromPrebuild, make)
}
