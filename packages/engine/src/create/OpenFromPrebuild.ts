import { PREBUILD_LABELS, type Prebuild, type Sandbox } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { PrebuildRepo } from "@prbox/store"
import { Clock, Context, Deferred, Effect, Fiber, Layer } from "effect"
import type { PrboxConfig } from "../Config.ts"
import { ContainerRuntime, type ExecOutcome } from "../ContainerRuntime.ts"
import { ExtraLabels, userSpec } from "../ContainerSpec.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { Lifecycle } from "../Lifecycle.ts"
import type { PrebuildPlan } from "../prebuild/FindPrebuild.ts"
import { MakePrebuild } from "../prebuild/MakePrebuild.ts"
import type { OpenPath } from "../prebuild/PrebuildDecision.ts"
import { prebuildHomeVolumeName } from "../prebuild/PrebuildNames.ts"
import { isCopyable, PrebuildSpares, prebuildFills } from "../prebuild/PrebuildSpares.ts"
import { afterPrebuild } from "../prebuild/PrebuildSteps.ts"
import {
  checkoutPrebuiltInContainer,
  prebuiltBundle,
  prebuiltCheckoutCommand,
  prebuiltCheckoutOutcome
} from "../workspace/ContainerWorkspaceGit.ts"
import { Ownership } from "../workspace/Ownership.ts"
import { type ContainerEnvironment, CreateContainer } from "./CreateContainer.ts"
import { GitIdentity } from "./GitIdentity.ts"
import type { CheckoutBesideProbe, StartedEarly } from "./OpenCheckout.ts"

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
 * A new sandbox started from a ready prebuild: its container made from the
 * prebuild's image (what the steps installed outside them) and started,
 * while a container of that image copies the prebuild's volumes into its
 * workspace and home (the host reads nothing a container wrote), then the
 * PR's commits brought in as a bundle and checked out by the container's
 * git. `onCreateCommand` ran in the prebuild: the container's setup runs the
 * rest (`updateContentCommand` again, so a step that skips unchanged work
 * is fast, then `postCreateCommand` and `postStartCommand`).
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const workspaces = yield* Workspaces
  const prebuilds = yield* PrebuildRepo
  const container = yield* CreateContainer
  const ownership = yield* Ownership
  const extraLabels = yield* ExtraLabels
  const { progress, emit, getRow } = yield* Lifecycle
  const makePrebuild = yield* MakePrebuild
  const spares = yield* PrebuildSpares
  const gitIdentity = yield* GitIdentity

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
      const folders = ownership.foldersOf(cloning.id, target.workspacePath)
      yield* prebuilds.markUsed(prebuild.id, yield* Clock.currentTimeMillis).pipe(Effect.ignore)
      // The PR's commits are bundled, and the host's git identity read, before its container starts: not beside code-server's start.
      const bundling = yield* Effect.forkChild(prebuiltBundle(workspaces, target, prebuild.baseCommit), {
        startImmediately: true
      })
      const identity = yield* Effect.forkChild(gitIdentity.values(config), { startImmediately: true })
      // Its spare, copied ahead, becomes the sandbox's folder; else the copy goes beside the container's start.
      const spare = isCopyable(prebuild) && (yield* spares.take(prebuild, folders.root))
      const from = `from prebuild ${prebuild.id} (${prebuild.baseBranch} at ${prebuild.baseCommit.slice(0, 7)})`
      yield* say(
        spare ? `${from}: its files were copied ahead` : `${from}: its files are copied in while its container starts`
      )
      // onCreateCommand ran in the prebuild; the rest of the create-time steps run in this container.
      const plan = afterPrebuild(environment.plan)
      const prebuilt: ContainerEnvironment = { ...environment, plan }
      // Its container only: the row keeps the environment's own image (a later rebuild starts from it).
      const fromImage = prebuild.image === null ? prebuilt : { ...prebuilt, plan: { ...plan, image: prebuild.image } }
      // One made before prebuilds kept an image (and a home) is its workspace alone.
      const fills = isCopyable(prebuild)
        ? prebuildFills(prebuild, folders)
        : [{ volume: prebuild.volume, folder: target.workspacePath }]
      if (!spare) {
        yield* ownership.makeFolders(folders)
        yield* ownership.makeWorkspaceFolder(target.workspacePath)
      }
      // The copy, by a container of the same image, goes beside the container's start: code-server
      // starts while the files come; what needs them (the PR's checkout, the steps) waits for it.
      const copying = yield* Effect.forkChild(
        spare
          ? Effect.void
          : makePrebuild.using(prebuild.id, runtime.copyIntoFolders(fromImage.plan.image, fills, extraLabels)),
        { startImmediately: true }
      )
      // The next open's spare, made once this one and any other has let the foreground go.
      yield* spares.refill(prebuild)
      const started = yield* container.start(cloning.id, config, fromImage, {
        workspacePath: target.workspacePath,
        checkoutHere: Effect.void,
        filledBesideStart: true
      })
      yield* Fiber.join(copying)
      const exec: ExecTarget = {
        id: cloning.id,
        containerId: started.containerId,
        user: userSpec(ownership.sandboxUser),
        workspaceFolder: plan.workspaceFolder,
        env: {},
        sourceCommit: target.commit
      }
      // Run in the probe's exec where becomeReady can (each exec beside code-server's start slows it
      // more than the git it runs), else in its own: beside what needs only the home either way.
      const beside = yield* Deferred.make<ExecOutcome | undefined>()
      const besideProbe: CheckoutBesideProbe = {
        user: exec.user,
        command: Effect.map(Fiber.join(bundling), (bundle) => prebuiltCheckoutCommand(exec, target, bundle)),
        ran: (outcome) => Effect.asVoid(Deferred.succeed(beside, outcome)),
        declined: Effect.asVoid(Deferred.succeed(beside, undefined))
      }
      const checkout = Effect.andThen(
        say(`bringing ${target.commit.slice(0, 7)} in as ${target.branch} in the sandbox`),
        Effect.flatMap(Deferred.await(beside), (outcome) =>
          outcome === undefined
            ? Effect.flatMap(Fiber.join(bundling), (bundle) =>
                checkoutPrebuiltInContainer(runtime, exec, target, bundle)
              )
            : prebuiltCheckoutOutcome(outcome)
        )
      )
      return {
        early: { environment: prebuilt, started, identity: Fiber.join(identity), besideProbe } satisfies StartedEarly,
        checkout
      }
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
      // The sandbox is ready by now: its log says what goes on in the background, under the status the row
      // has, and its detail (its address) stays.
      const current = yield* getRow(row.id)
      const say = (line: string) => emit(row.id, current.status, line)
      // The open path copies a prebuild's volume on this machine's engine only: one made elsewhere would never be used.
      if ((yield* runtime.filesAt) !== "host") {
        return yield* say("no prebuild made: the engine is remote (prebuilds are made on this machine's engine only)")
      }
      const { environmentPlan, host } = current
      if (environmentPlan === null) return
      const { branch, commit } = planned.base
      yield* say(`prebuild of ${branch} at ${commit.slice(0, 7)} started in the background`)
      const made = {
        key: planned.key,
        host: host ?? "local",
        repository: row.repository,
        baseBranch: branch,
        baseCommit: commit,
        mirrorPath,
        plan: environmentPlan
      }
      // A ready prebuild gets its spare at once: the first open from it takes no copy.
      yield* makePrebuild.background(made, undefined, (ready) =>
        ready === undefined ? Effect.void : spares.refill(ready)
      )
    }).pipe(Effect.ignore)

  return { choose, start, background }
})

export class OpenFromPrebuild extends Context.Service<OpenFromPrebuild, Effect.Success<typeof make>>()(
  "prbox/engine/OpenFromPrebuild"
) {
  static readonly layer = Layer.effect(OpenFromPrebuild, make)
}
