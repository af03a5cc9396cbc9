import { type Prebuild, posixPath, sealedFolders, statePaths } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Context, Effect, FiberSet, FileSystem, Layer, Ref, Semaphore } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { ExtraLabels } from "../ContainerSpec.ts"
import { HostFailure, hostErrorCode } from "../Errors.ts"
import { Foreground } from "../Foreground.ts"
import { Ownership, removeSandboxFolders } from "../workspace/Ownership.ts"
import { MakePrebuild } from "./MakePrebuild.ts"
import { prebuildHomeVolumeName } from "./PrebuildNames.ts"

/** A prebuild a sandbox's folders can be copied from: its workspace volume, its home volume and its image. */
export type CopyablePrebuild = Prebuild & { readonly volume: string; readonly image: string }

export const isCopyable = (prebuild: Prebuild): prebuild is CopyablePrebuild =>
  prebuild.volume !== null && prebuild.image !== null

/** What of the prebuild goes where: its workspace volume into `workspace`, its home's into `home`. */
export const prebuildFills = (
  prebuild: CopyablePrebuild,
  folders: { readonly workspace: string; readonly home: string }
) => [
  { volume: prebuild.volume, folder: folders.workspace },
  { volume: prebuildHomeVolumeName(prebuild.id), folder: folders.home }
]

/** A spare's folder: `<prebuild id>.<random>`, with `.partial` until its copy is whole. */
const SPARE_NAME = /^(pb[a-z2-7]+)\.[0-9a-f]+(\.partial)?$/
const PARTIAL = ".partial"

/** A spare's folder, as its name says: whose it is and whether its copy is whole. */
export interface SpareFolder {
  readonly name: string
  readonly prebuildId: string
  readonly partial: boolean
}

/** What a prebuild holds on disk: its size, twice its size while a spare of it is ready. */
export const onDisk = (row: Prebuild, spared: ReadonlySet<string>): number | null =>
  row.sizeBytes === null ? null : row.sizeBytes * (spared.has(row.id) ? 2 : 1)

const randomSuffix = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(6)), (byte) => byte.toString(16).padStart(2, "0")).join("")

/**
 * A ready prebuild's spare: a sandbox's folder (its sealed workspace and
 * home, `$PRBOX_HOME/spares/<prebuild>.<random>`) with the prebuild's
 * volumes already copied in by a container of its image (runtime
 * `copyIntoFolders`, as an open's copy), made in the background at low
 * priority. An open from the prebuild renames it to its own folder (one
 * rename, nothing read or walked), so no copy runs beside its container's
 * start, and the next is made behind it. A spare is made whole under
 * `.partial` and renamed when the copy succeeded: a daemon killed meanwhile
 * leaves a `.partial` folder that cleanup removes (`strays`), as it removes
 * the spares of a prebuild no longer ready.
 */
const make = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const runtime = yield* ContainerRuntime
  const ownership = yield* Ownership
  const labels = yield* ExtraLabels
  const foreground = yield* Foreground
  const maker = yield* MakePrebuild
  const repo = yield* PrebuildRepo
  const dir = statePaths((yield* Config).home).spares
  /** Prebuilds whose spare is being made by this daemon. */
  const making = yield* Ref.make<ReadonlySet<string>>(new Set())
  const permit = yield* Semaphore.make(1)
  const running = yield* FiberSet.make<unknown, unknown>()

  const names = fs.readDirectory(dir).pipe(
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed([])),
    Effect.mapError(
      (error) => new HostFailure({ operation: "read the prebuilds' spares", detail: hostErrorCode(error) })
    )
  )

  /** The spares' folders (anything else there is not prbox's and left be). */
  const folders = Effect.map(names, (all) =>
    all.flatMap((name): Array<SpareFolder> => {
      const [, prebuildId, partial] = SPARE_NAME.exec(name) ?? []
      return prebuildId === undefined ? [] : [{ name, prebuildId, partial: partial !== undefined }]
    })
  )

  const readyOf = (prebuildId: string) =>
    Effect.map(folders, (all) => all.filter((spare) => spare.prebuildId === prebuildId && !spare.partial))

  /** The folders a removal clears: the sealed one by the engine where this machine cannot. */
  const remove = (name: string) =>
    removeSandboxFolders(fs, sealedFolders(posixPath.join(dir, name)), Effect.succeed(runtime), labels)

  /**
   * Moves a ready spare of `prebuild` to `root` (a new sandbox's folder, not
   * made yet): true when one was there to take. Any failure leaves the open
   * to copy the prebuild itself.
   */
  const take = (prebuild: CopyablePrebuild, root: string) =>
    Effect.gen(function* () {
      yield* fs.makeDirectory(posixPath.join(root, ".."), { recursive: true })
      for (const { name } of yield* readyOf(prebuild.id)) {
        const moved = yield* Effect.result(fs.rename(posixPath.join(dir, name), root))
        if (moved._tag === "Success") return true
      }
      return false
    }).pipe(
      Effect.catch((error) =>
        Effect.as(Effect.logWarning(`prebuild ${prebuild.id}: no spare taken: ${error.message}`), false)
      )
    )

  /** One spare of `prebuild` made: its folders, sealed, the copy, then its ready name. */
  const makeSpare = (prebuild: CopyablePrebuild) =>
    Effect.gen(function* () {
      const name = `${prebuild.id}.${randomSuffix()}`
      const made = sealedFolders(posixPath.join(dir, `${name}${PARTIAL}`))
      const making = Effect.gen(function* () {
        yield* ownership.makeFolders(made)
        yield* ownership.makeWorkspaceFolder(made.workspace)
        yield* ownership.seal(made, runtime, labels)
        yield* runtime.copyIntoFolders(prebuild.image, prebuildFills(prebuild, made), labels)
        yield* fs.rename(made.root, posixPath.join(dir, name))
      })
      yield* making.pipe(Effect.tapError(() => Effect.ignore(remove(`${name}${PARTIAL}`))))
    })

  /** `effect` with prebuild `id` marked as having its spare made (`strays` leaves its `.partial` folder). */
  const marked = <A, E>(id: string, effect: Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Ref.update(making, (ids) => new Set([...ids, id])),
      () => effect,
      () => Ref.update(making, (ids) => new Set([...ids].filter((other) => other !== id)))
    )

  /**
   * A spare of `prebuild` made in the background if it has none by then
   * (one at a time, after any open or claim under way, the prebuild kept
   * from gc meanwhile); a failure is a warning in the daemon's log.
   */
  const refill = (prebuild: Prebuild) => {
    if (!isCopyable(prebuild)) return Effect.void
    const work = permit.withPermit(
      Effect.gen(function* () {
        yield* foreground.whenIdle(Effect.void)
        if ((yield* readyOf(prebuild.id)).length > 0) return
        // Kept from gc from here; one gc removed meanwhile gets none (Docker would make its volumes anew, empty).
        const still = Effect.map(repo.get(prebuild.id), (row) => row?.state === "ready")
        yield* maker.using(
          prebuild.id,
          Effect.flatMap(still, (ready) => (ready ? marked(prebuild.id, makeSpare(prebuild)) : Effect.void))
        )
      })
    )
    const warned = Effect.catchCause(work, (cause) =>
      Effect.logWarning(`prebuild ${prebuild.id}: its spare was not made`, cause)
    )
    return Effect.asVoid(FiberSet.run(running, warned))
  }

  /**
   * The spares to remove, every one but the ready ones of `keep` (the ready
   * prebuilds): those of a prebuild gone or not ready, and a `.partial` one
   * no refill of this daemon makes (a killed daemon's).
   */
  const strays = (keep: ReadonlySet<string>) =>
    Effect.gen(function* () {
      const inFlight = yield* Ref.get(making)
      return (yield* folders).filter((spare) =>
        spare.partial ? !inFlight.has(spare.prebuildId) : !keep.has(spare.prebuildId)
      )
    })

  /** The prebuilds with a ready spare (gc and the status count its disk twice: `onDisk`). */
  const spared = Effect.map(folders, (all) => new Set(all.filter((spare) => !spare.partial).map((s) => s.prebuildId)))

  return { take, refill, strays, remove, spared, settled: FiberSet.awaitEmpty(running) }
})

export class PrebuildSpares extends Context.Service<PrebuildSpares, Effect.Success<typeof make>>()(
  "prbox/engine/PrebuildSpares"
) {
  static readonly layer = Layer.effect(PrebuildSpares, make)
}
