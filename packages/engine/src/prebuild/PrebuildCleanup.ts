import { PREBUILD_LABELS } from "@prbox/domain"
import { PrebuildRepo } from "@prbox/store"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { LABELS } from "../ContainerSpec.ts"
import { DiscoveryFailed, safeReason } from "../Errors.ts"
import { Installation } from "../Installation.ts"
import { MakePrebuild } from "./MakePrebuild.ts"
import { planPrebuildGc } from "./PrebuildGc.ts"
import { PREBUILD_HOME_LABEL, PREBUILD_IMAGE_LABELS, prebuildHomeVolumeName } from "./PrebuildNames.ts"
import { onDisk, PrebuildSpares } from "./PrebuildSpares.ts"

const DAY = 86_400_000
const GIB = 1024 ** 3

export interface PrebuildCleanupReport {
  /** What was changed: "<id>: <what>". */
  readonly changes: ReadonlyArray<string>
  readonly failures: ReadonlyArray<string>
}

/**
 * Runs one removal of a cleanup pass: what it did goes to `changes` (unless
 * it answered "kept": an image in use stays, and what goes with it), a
 * failure (said safely) to `failures`.
 */
export const attempt = (
  changes: Array<string>,
  failures: Array<string>,
  what: string,
  effect: Effect.Effect<unknown, unknown>
) =>
  Effect.matchEffect(effect, {
    onFailure: (error) => Effect.sync(() => void failures.push(`${what}: ${safeReason(error)}`)),
    onSuccess: (done) => Effect.sync(() => void (done === "kept" || changes.push(what)))
  })

/**
 * Prebuilds' reconcile and gc. Reconcile: a `making` row no build of this
 * daemon runs failed (its daemon stopped), a prebuild container no build
 * runs removed (one never outlives its build), a prebuild volume or image
 * whose row is not ready removed. Gc: `planPrebuildGc` over the rows, never
 * one being made or copied from; one whose image a sandbox's container is
 * made from stays until that container is gone. A listing that fails fails the pass (nothing
 * changed); each failed removal is reported, never dropped.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const repo = yield* PrebuildRepo
  const maker = yield* MakePrebuild
  const spares = yield* PrebuildSpares
  const config = yield* Config
  const install = (yield* Installation).id
  const ours = { [PREBUILD_HOME_LABEL]: config.home, [LABELS.install]: install }

  const listed = <A, E extends { readonly message: string }>(operation: string, effect: Effect.Effect<A, E>) =>
    Effect.mapError(effect, (error) => new DiscoveryFailed({ operation, detail: error.message }))

  /** The report with the spares swept (those of `ready` kept), each removal attempted and reported. */
  const withSpares = (changes: Array<string>, failures: Array<string>, ready: ReadonlySet<string>) =>
    Effect.gen(function* () {
      for (const spare of yield* listed("prebuild spares", spares.strays(ready))) {
        yield* attempt(changes, failures, `${spare.prebuildId}: spare removed`, spares.remove(spare.name))
      }
      return { changes, failures } satisfies PrebuildCleanupReport
    })

  const reconcile = Effect.fn("Prebuilds.reconcile")(function* () {
    const busy = yield* maker.busy
    const rows = yield* listed("prebuilds", repo.list)
    const containers = yield* listed("prebuild containers", runtime.listByLabel(ours))
    const volumes = yield* listed("prebuild volumes", runtime.listFilesByLabel({ [LABELS.install]: install }))
    const images = yield* listed(
      "prebuild images",
      runtime.listImagesByLabel({ [PREBUILD_IMAGE_LABELS.home]: config.home, [LABELS.install]: install })
    )
    const changes: Array<string> = []
    const failures: Array<string> = []
    for (const row of rows) {
      if (row.state !== "making" || busy.has(row.id)) continue
      const ended = repo.finish(row.id, { state: "failed", error: "the daemon stopped while it was made" })
      yield* attempt(changes, failures, `${row.id}: ended (its daemon stopped)`, ended)
    }
    for (const container of containers) {
      const id = container.labels[PREBUILD_LABELS.prebuild]
      if (id === undefined || busy.has(id)) continue
      yield* attempt(changes, failures, `${id}: container removed`, runtime.destroy(container.containerId))
    }
    const ready = new Set(rows.filter((row) => row.state === "ready").map((row) => row.id))
    for (const volume of volumes) {
      const id = volume.labels[PREBUILD_LABELS.prebuild]
      if (id === undefined || busy.has(id) || ready.has(id)) continue
      yield* attempt(changes, failures, `${id}: volume removed`, runtime.removeFiles(volume.name))
    }
    for (const image of images) {
      const id = image.labels[PREBUILD_IMAGE_LABELS.prebuild]
      if (id === undefined || busy.has(id) || ready.has(id)) continue
      for (const tag of image.tags) yield* attempt(changes, failures, `${id}: image removed`, runtime.removeImage(tag))
    }
    return yield* withSpares(changes, failures, ready)
  })

  const collect = Effect.fn("Prebuilds.gc")(function* () {
    const cfg = yield* config.load
    const rows = yield* listed("prebuilds", repo.list)
    const busy = yield* maker.busy
    const policy =
      cfg.prebuilds === false
        ? undefined
        : { maxBytes: cfg.prebuilds.maxGiB * GIB, keepMs: cfg.prebuilds.keepDays * DAY }
    const changes: Array<string> = []
    const failures: Array<string> = []
    // A ready spare is a second copy of its prebuild's files on disk: the cap counts it.
    const spared = yield* listed("prebuild spares", spares.spared)
    const measured = rows.map((row) => ({ ...row, sizeBytes: onDisk(row, spared) }))
    const removed = new Set<string>()
    for (const removal of planPrebuildGc(measured, busy, yield* Clock.currentTimeMillis, policy)) {
      // Checked again just before: an open may have started copying from it meanwhile.
      if ((yield* maker.busy).has(removal.id)) continue
      const row = rows.find((candidate) => candidate.id === removal.id)
      const gone = Effect.gen(function* () {
        // Its image first: while a sandbox's container is made from it, the prebuild stays whole.
        if (row?.image != null && (yield* runtime.removeImage(row.image)) === "in-use") return "kept"
        if (row?.volume != null) yield* runtime.removeFiles(row.volume)
        yield* runtime.removeFiles(prebuildHomeVolumeName(removal.id))
        yield* repo.delete(removal.id)
        removed.add(removal.id)
        return "removed"
      })
      yield* attempt(changes, failures, `${removal.id}: removed (${removal.reason})`, gone)
    }
    const ready = rows.filter((row) => row.state === "ready" && !removed.has(row.id)).map((row) => row.id)
    return yield* withSpares(changes, failures, new Set(ready))
  })

  /** Gc every `gcIntervalMinutes`, as the sandboxes' gc, logging what it did and what failed. */
  const timer = Effect.gen(function* () {
    const cfg = Option.getOrUndefined(yield* Effect.option(config.load))
    yield* Effect.sleep((cfg?.gcIntervalMinutes ?? 5) * 60_000)
    yield* collect().pipe(
      Effect.tap((report) =>
        Effect.forEach([...report.changes.map((c) => `prebuild gc: ${c}`)], (line) => Effect.logInfo(line), {
          discard: true
        })
      ),
      Effect.tap((report) =>
        Effect.forEach(report.failures, (line) => Effect.logWarning(`prebuild gc: ${line}`), { discard: true })
      ),
      Effect.catch((error) => Effect.logWarning(`prebuild gc: ${error.message}`))
    )
  }).pipe(Effect.forever)

  return { reconcile, collect, timer }
})

export class PrebuildCleanup extends Context.Service<PrebuildCleanup, Effect.Success<typeof make>>()(
  "prbox/engine/PrebuildCleanup"
) {
  static readonly layer = Layer.effect(PrebuildCleanup, make)
}
