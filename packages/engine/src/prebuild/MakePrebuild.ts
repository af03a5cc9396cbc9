import { capabilitiesToDrop, type EnvironmentPlan, PREBUILD_LABELS, type Prebuild, SandboxId } from "@prbox/domain"
import { Workspaces } from "@prbox/git"
import { PrebuildRepo } from "@prbox/store"
import { Context, Effect, Exit, FiberSet, Layer, Option, Ref, Semaphore } from "effect"
import { CONTAINER_HOME } from "../CodeServerSpec.ts"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { type ContainerSpec, daemonSandboxUser, ExtraLabels, LABELS, userSpec } from "../ContainerSpec.ts"
import { safeReason } from "../Errors.ts"
import type { ExecTarget } from "../exec/ExecTarget.ts"
import { Foreground } from "../Foreground.ts"
import { Installation } from "../Installation.ts"
import { checkoutInContainer, containerWorkspaceGit } from "../workspace/ContainerWorkspaceGit.ts"
import { PrebuildFailed } from "./Errors.ts"
import {
  PREBUILD_HOME_LABEL,
  prebuildHomeVolumeName,
  prebuildImageLabels,
  prebuildImageTag,
  prebuildVolumeName
} from "./PrebuildNames.ts"
import { runPrebuildSteps } from "./PrebuildSteps.ts"

/** What a prebuild is made of: the base branch's commit in the mirror and its environment, its image present. */
export interface PrebuildInput {
  readonly key: string
  readonly host: string
  readonly repository: string
  readonly baseBranch: string
  readonly baseCommit: string
  readonly mirrorPath: string
  readonly plan: EnvironmentPlan
}

/** A prebuild runs at low priority: an eighth of a sandbox's CPU weight (Docker's default 1024) when both want it. */
const PREBUILD_CPU_SHARES = 128

/** Keeps the container up, idle, for the steps' execs; ends at once on a stop. */
const IDLE = ["/bin/sh", "-c", "trap 'exit 0' TERM INT; while :; do sleep 3600 & wait $!; done"]

const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"
const newId = () =>
  `pb${Array.from(crypto.getRandomValues(new Uint8Array(12)), (byte) => ALPHABET[byte % 32]).join("")}`

/**
 * Makes a prebuild: a container of the environment's image (never started
 * with any PR's code, only the base branch's), its workspace and home
 * volumes, the base commit brought in as a bundle from the mirror and
 * checked out by the container's git as the sandbox user, `onCreateCommand`
 * and `updateContentCommand` run there; the volumes kept, what the steps
 * changed elsewhere (installed tools) kept as an image committed from the
 * container, the container removed. One at a time per daemon (`making` holds the ids in flight).
 * The row is `making` throughout: a daemon killed meanwhile leaves it for
 * reconcile (Prebuilds.ts) to end, with the container and volume it made.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const workspaces = yield* Workspaces
  const repo = yield* PrebuildRepo
  const { home } = yield* Config
  const installation = yield* Installation
  const extraLabels = yield* ExtraLabels
  const foreground = yield* Foreground
  const inFlight = yield* Ref.make<ReadonlySet<string>>(new Set())
  /** Prebuilds an open is copying from now, each with how many opens: gc never removes one. */
  const inUse = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
  const permit = yield* Semaphore.make(1)
  const user = daemonSandboxUser()

  const labelsOf = (row: Prebuild): Record<string, string> => ({
    ...extraLabels,
    [PREBUILD_LABELS.prebuild]: row.id,
    [PREBUILD_LABELS.key]: row.key,
    [PREBUILD_HOME_LABEL]: home,
    [LABELS.install]: installation.id
  })

  /** What a build that failed made: its image and volumes (each already gone is fine). */
  const removeMade = (id: string) =>
    Effect.all(
      [
        Effect.ignore(runtime.removeImage(prebuildImageTag(id))),
        Effect.ignore(runtime.removeFiles(prebuildVolumeName(id))),
        Effect.ignore(runtime.removeFiles(prebuildHomeVolumeName(id)))
      ],
      { discard: true }
    )

  /** The container, its volumes, the base checked out, the steps run and the container committed: what it holds, measured. */
  const build = (row: Prebuild, input: PrebuildInput, onProgress: (line: string) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      // Low priority: each step waits while an open or a claim runs.
      const paused = foreground.whenIdle(onProgress("prebuild: paused while an open runs"))
      const step =
        (operation: string) =>
        <A, E extends { readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
          Effect.andThen(
            paused,
            Effect.mapError(effect, (error) => new PrebuildFailed({ operation, detail: error.message }))
          )
      const { plan } = input
      const workspace = plan.workspaceFolder
      const volume = prebuildVolumeName(row.id)
      // The image's own user, env and working folder (none given here): the committed image keeps them.
      const spec: ContainerSpec = {
        name: `prbox-prebuild-${row.id}`,
        image: plan.image,
        entrypoint: IDLE,
        args: [],
        env: {},
        labels: labelsOf(row),
        binds: [],
        volumes: [
          { name: volume, containerPath: workspace, readOnly: false },
          { name: prebuildHomeVolumeName(row.id), containerPath: CONTAINER_HOME, readOnly: false }
        ],
        user: "",
        workingDir: "",
        port: 8080,
        capDrop: capabilitiesToDrop(),
        cpuShares: PREBUILD_CPU_SHARES,
        ...(plan.cpus === null ? {} : { cpus: plan.cpus }),
        ...(plan.memoryMb === null ? {} : { memoryBytes: plan.memoryMb * 1024 * 1024 })
      }
      const containerId = yield* Effect.acquireRelease(runtime.provision(spec).pipe(step("make its container")), (id) =>
        Effect.ignore(runtime.destroy(id, { keepFiles: true }))
      )
      yield* runtime.start(containerId).pipe(step("start its container"))
      // The volume is new and empty (root's): the workspace and home become the sandbox user's before any step.
      const own = yield* runtime
        .exec(
          containerId,
          [
            "/bin/sh",
            "-c",
            'mkdir -p "$1" "$2" && chown "$3" "$1" "$2" && chmod 700 "$2"',
            "prebuild",
            workspace,
            CONTAINER_HOME,
            userSpec(user)
          ],
          {
            user: "0:0",
            cwd: "/",
            timeoutMs: 60_000,
            maxOutputBytes: 4096
          }
        )
        .pipe(step("prepare its folders"))
      if (own.exitCode !== 0)
        return yield* new PrebuildFailed({ operation: "prepare its folders", detail: `exited with ${own.exitCode}` })
      const target: ExecTarget = {
        id: SandboxId.make(row.id.slice(0, 12).padEnd(12, "a")),
        containerId,
        user: userSpec(user),
        workspaceFolder: workspace,
        env: { HOME: CONTAINER_HOME },
        sourceCommit: input.baseCommit
      }
      yield* onProgress(
        `prebuild: checking out ${input.baseBranch} at ${input.baseCommit.slice(0, 7)} in its container`
      )
      const init = yield* runtime
        .exec(containerId, ["git", "init", "--quiet", workspace], {
          user: target.user,
          cwd: workspace,
          timeoutMs: 60_000,
          maxOutputBytes: 4096
        })
        .pipe(step("git init"))
      if (init.exitCode !== 0)
        return yield* new PrebuildFailed({ operation: "git init", detail: "the image has no working git" })
      const git = containerWorkspaceGit(runtime, workspaces, target)
      yield* git.bringCommit(input.mirrorPath, input.baseCommit, []).pipe(step("bring the base commit"))
      yield* checkoutInContainer(runtime, target, input.baseBranch, input.baseCommit).pipe(step("check out the base"))
      const env = { ...plan.containerEnv, ...plan.remoteEnv, HOME: CONTAINER_HOME }
      const place = { containerId, user: target.user, cwd: workspace, env }
      yield* runPrebuildSteps(runtime, place, plan, undefined, onProgress, paused)
      // The number is the container's to say; it only orders gc, never decides a host action.
      const du = yield* runtime
        .exec(containerId, ["du", "-sk", workspace, CONTAINER_HOME], {
          user: target.user,
          cwd: "/",
          timeoutMs: 120_000,
          maxOutputBytes: 4096
        })
        .pipe(step("measure its workspace"))
      const kib = du.stdout
        .trim()
        .split("\n")
        .map((line) => Number.parseInt(line.split(/\s/)[0] ?? "", 10))
        .reduce((sum, n) => sum + (Number.isSafeInteger(n) && n >= 0 ? n : 0), 0)
      yield* onProgress(`prebuild: keeping what its steps changed outside the workspace (an image)`)
      const image = prebuildImageTag(row.id)
      const imageLabels = prebuildImageLabels(row.id, home, { ...extraLabels, [LABELS.install]: installation.id })
      yield* runtime
        .commit(containerId, { tag: image, base: plan.image, labels: imageLabels })
        .pipe(step("keep its image"))
      const [made, base] = yield* Effect.all([runtime.imageInfo(image), runtime.imageInfo(plan.image)]).pipe(
        step("measure its image")
      )
      const layer = Math.max(0, (made?.size ?? 0) - (base?.size ?? 0))
      return { volume, image, sizeBytes: kib * 1024 + layer }
    })

  /**
   * Makes one prebuild and records how it ended; the row as it then
   * stands. A failed one keeps no volume; its row says why.
   */
  const makePrebuild = Effect.fn("Prebuilds.make")(function* (
    input: PrebuildInput,
    onProgress: (line: string) => Effect.Effect<void> = () => Effect.void
  ) {
    const row: Prebuild = {
      id: newId(),
      key: input.key,
      host: input.host,
      repository: input.repository,
      baseBranch: input.baseBranch,
      baseCommit: input.baseCommit,
      image: null,
      volume: null,
      sizeBytes: null,
      state: "making",
      error: null,
      startedAt: Date.now(),
      readyAt: null,
      usedAt: null
    }
    return yield* permit.withPermit(
      Effect.gen(function* () {
        yield* repo.insert(row)
        yield* Ref.update(inFlight, (ids) => new Set([...ids, row.id]))
        const built = yield* Effect.exit(Effect.scoped(build(row, input, onProgress)))
        if (Exit.isSuccess(built)) {
          const { volume, image, sizeBytes } = built.value
          yield* repo.finish(row.id, { state: "ready", image, volume, sizeBytes, readyAt: Date.now() })
          yield* onProgress(`prebuild ${row.id} ready (${Math.ceil(sizeBytes / 1024 / 1024)} MiB)`)
        } else {
          yield* removeMade(row.id)
          const error = Exit.findErrorOption(built)
          const reason = Option.isSome(error)
            ? safeReason(error.value)
            : Exit.hasInterrupts(built)
              ? "interrupted"
              : "unexpected failure"
          yield* repo.finish(row.id, { state: "failed", error: reason })
          yield* onProgress(`prebuild ${row.id} failed: ${reason}`)
        }
        return yield* repo.get(row.id)
      }).pipe(Effect.ensuring(Ref.update(inFlight, (ids) => new Set([...ids].filter((id) => id !== row.id)))))
    )
  })

  const running = yield* FiberSet.make<unknown, unknown>()

  /** A build in the background, past the open that asked for it, then `after` with its row; ended with the engine. */
  const background = (
    input: PrebuildInput,
    onProgress: (line: string) => Effect.Effect<void> = () => Effect.void,
    after: (row: Prebuild | undefined) => Effect.Effect<void> = () => Effect.void
  ) => FiberSet.run(running, Effect.ignore(Effect.flatMap(makePrebuild(input, onProgress), after))).pipe(Effect.asVoid)

  const count = (id: string, by: number) =>
    Ref.update(inUse, (uses) => {
      const next = new Map(uses)
      const n = (next.get(id) ?? 0) + by
      if (n > 0) next.set(id, n)
      else next.delete(id)
      return next
    })

  /** Runs `effect` with prebuild `id` marked in use (gc keeps it meanwhile). */
  const using = <A, E, R>(id: string, effect: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      count(id, 1),
      () => effect,
      () => count(id, -1)
    )

  return {
    make: makePrebuild,
    using,
    /** What gc must keep: the ones being made and the ones an open copies from. */
    busy: Effect.map(
      Effect.all([Ref.get(inFlight), Ref.get(inUse)]),
      ([made, used]) => new Set([...made, ...used.keys()])
    ),
    background,
    /** Resolves once no background build runs (tests, and a clean shutdown's log). */
    settled: FiberSet.awaitEmpty(running),
    inFlight: Ref.get(inFlight)
  }
})

export class MakePrebuild extends Context.Service<MakePrebuild, Effect.Success<typeof make>>()(
  "prbox/engine/MakePrebuild"
) {
  static readonly layer = Layer.effect(MakePrebuild, make)
}
