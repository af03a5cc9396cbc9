import { POOL_LABEL, type PoolEntry, planPoolGc, poolShortfall } from "@prbox/domain"
import { type PoolClaim, PoolRepo, SandboxRepo } from "@prbox/store"
import { Clock, Context, Effect, FiberSet, Layer, Option, Ref, Semaphore } from "effect"
import { Config, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { LABELS } from "../ContainerSpec.ts"
import { DiscoveryFailed, mapStoreErrors } from "../Errors.ts"
import { Installation } from "../Installation.ts"
import { attempt, type PrebuildCleanupReport } from "../prebuild/PrebuildCleanup.ts"
import type { OpenPath } from "../prebuild/PrebuildDecision.ts"
import { PoolContainer, type PoolInput } from "./PoolContainer.ts"

/**
 * The key an open claims by: the ready prebuild its path starts from, for an
 * image-only environment on the local engine, the pool on; else none
 * (today's path: Compose, remote engines, an environment built from the files).
 */
export const poolKeyFor = (
  cfg: PrboxConfig,
  open: OpenPath | undefined,
  facts: { readonly imageOnly: boolean; readonly localEngine: boolean }
): string | undefined =>
  cfg.warmPool.size > 0 &&
  open?._tag === "Prebuild" &&
  open.prebuild.volume !== null &&
  facts.imageOnly &&
  facts.localEngine
    ? open.prebuild.key
    : undefined

/**
 * The warm pool: started containers of a ready prebuild waiting for an open
 * of their environment key. `fill` makes them in the background after an
 * open (one at a time, up to `warmPool.size` per key); `claim` turns one into
 * the PR's sandbox row in one store transaction (PoolRepo.claim); `collect`
 * removes ones idle past `idleMinutes` (a claimed one is no longer the
 * pool's: of a claim and a removal of one entry, the store lets one win);
 * `reconcile` removes what a stopped daemon left half made, dead, or
 * labelled `dev.prbox.pool` with neither an entry nor a sandbox row.
 */
const make = Effect.gen(function* () {
  const pool = yield* PoolRepo
  const sandboxes = yield* SandboxRepo
  const runtime = yield* ContainerRuntime
  const containers = yield* PoolContainer
  const config = yield* Config
  const install = (yield* Installation).id
  const permit = yield* Semaphore.make(1)
  const running = yield* FiberSet.make<unknown, unknown>()
  /** Entries this daemon is making now: reconcile never takes one. */
  const making = yield* Ref.make<ReadonlySet<string>>(new Set())

  const listed = <A, E extends { readonly message: string }>(operation: string, effect: Effect.Effect<A, E>) =>
    Effect.mapError(effect, (error) => new DiscoveryFailed({ operation, detail: error.message }))

  /** Tops the pool of `input`'s key up to `size`, one container at a time, past the open that asked. */
  const fill = (input: PoolInput, cfg: PrboxConfig) =>
    FiberSet.run(
      running,
      permit
        .withPermit(
          Effect.gen(function* () {
            const wanted = poolShortfall(yield* pool.list, input.prebuild.key, cfg.warmPool.size)
            for (let n = 0; n < wanted; n++) {
              const made = yield* containers.makeOne(input, cfg, (id) =>
                Ref.update(making, (ids) => new Set([...ids, id]))
              )
              if (made !== undefined) yield* Effect.logInfo(`warm pool: ${made} ready for ${input.prebuild.repository}`)
            }
          })
        )
        .pipe(
          Effect.ensuring(Ref.set(making, new Set())),
          Effect.catch((error) => Effect.logWarning(`warm pool: a container could not be made: ${error.message}`))
        )
    ).pipe(Effect.asVoid)

  /** The PR's sandbox row made of the oldest ready entry of `key`, with the base its workspace holds; none: undefined. */
  const claim = (key: string, pr: PoolClaim) => pool.claim(key, pr)

  /** Gc's pass over the pool; `at`: the time it judges idleness by (now unless a test moves it on). */
  const collect = Effect.fn("WarmPool.gc")(function* (at?: number) {
    const cfg = yield* config.load
    const entries = yield* listed("warm pool", pool.list)
    const changes: Array<string> = []
    const failures: Array<string> = []
    for (const entry of planPoolGc(entries, at ?? (yield* Clock.currentTimeMillis), cfg.warmPool)) {
      const removal = Effect.gen(function* () {
        // Taken from the store first: a claim that won meanwhile keeps its container.
        const taken = yield* pool.take(entry.id)
        if (taken !== undefined) yield* containers.remove(entry.id, entry.workspacePath)
      })
      yield* attempt(changes, failures, `${entry.id}: removed (idle)`, removal)
    }
    return { changes, failures } satisfies PrebuildCleanupReport
  })

  /**
   * After a daemon stopped: an entry no maker of this daemon runs that is
   * not `ready`, or whose container does not run, is removed; a container
   * labelled `dev.prbox.pool` with neither an entry nor a sandbox row is
   * removed (one whose row is a sandbox's is that sandbox's: drift judges it).
   */
  const reconcile = Effect.fn("WarmPool.reconcile")(function* () {
    const inFlight = yield* Ref.get(making)
    const entries = yield* listed("warm pool", pool.list)
    const rows = yield* listed("sandboxes", sandboxes.findAll())
    const listedContainers = yield* listed(
      "pool containers",
      runtime.listByLabel({ [LABELS.home]: config.home, [LABELS.install]: install })
    )
    const changes: Array<string> = []
    const failures: Array<string> = []
    const running = new Set(listedContainers.filter((c) => c.running).map((c) => c.containerId))
    const dead = (entry: PoolEntry) =>
      !inFlight.has(entry.id) &&
      (entry.state !== "ready" || entry.containerId === null || !running.has(entry.containerId))
    for (const entry of entries.filter(dead)) {
      const removal = Effect.andThen(pool.take(entry.id), containers.remove(entry.id, entry.workspacePath))
      yield* attempt(
        changes,
        failures,
        `${entry.id}: removed (its daemon stopped, or its container did not run)`,
        removal
      )
    }
    const known = new Set<string>([...entries.map((e) => e.id), ...rows.map((r) => r.id)])
    for (const container of listedContainers) {
      const id = container.labels[LABELS.sandbox]
      if (container.labels[POOL_LABEL] === undefined || id === undefined || known.has(id)) continue
      yield* attempt(
        changes,
        failures,
        `${id}: pool container without a row removed`,
        runtime.destroy(container.containerId)
      )
    }
    return { changes, failures } satisfies PrebuildCleanupReport
  })

  /** Gc every `gcIntervalMinutes`, as the sandboxes' gc, logging what it did and what failed. */
  const timer = Effect.gen(function* () {
    const cfg = Option.getOrUndefined(yield* Effect.option(config.load))
    yield* Effect.sleep((cfg?.gcIntervalMinutes ?? 5) * 60_000)
    const report = yield* collect().pipe(
      Effect.catch((error) => Effect.as(Effect.logWarning(`warm pool gc: ${error.message}`), undefined))
    )
    for (const line of report?.changes ?? []) yield* Effect.logInfo(`warm pool gc: ${line}`)
    for (const line of report?.failures ?? []) yield* Effect.logWarning(`warm pool gc: ${line}`)
  }).pipe(Effect.forever)

  return {
    fill,
    claim,
    collect,
    reconcile,
    timer,
    list: pool.list.pipe(mapStoreErrors("pool.list")),
    /** Resolves once no fill runs (tests). */
    settled: FiberSet.awaitEmpty(running)
  }
})

export class WarmPool extends Context.Service<WarmPool, Effect.Success<typeof make>>()("prbox/engine/WarmPool") {
  static readonly layer = Layer.effect(WarmPool, make)
}
