import { type Sandbox, type SandboxEvent, type SandboxId, SandboxNotFound, type SandboxStatus } from "@prbox/domain"
import { SandboxRepo, type StatusUpdate } from "@prbox/store"
import { Clock, Context, Deferred, Effect, Fiber, Layer, Option, PubSub, Ref, Semaphore, Stream } from "effect"
import { mapStoreErrors, StopWon, type StoreFailure, type StoreFailures } from "./Errors.ts"

type Write<A> = Effect.Effect<A, StoreFailures | SandboxNotFound>

/** Runs an effect while holding a permit. */
type Held = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/**
 * The lock order, the only place it is written: **admission → lifecycle →
 * container(id)**. A holder takes a later permit only, never an earlier one
 * (the permits are not reentrant: taking one twice deadlocks):
 * - `admit`: an open or restart's admission (singleton check, row insert,
 *   worker hand-off). It may take `serialized` (a per-PR reconcile, a status
 *   write) inside.
 * - `serialized`: status writes of workers and stops, retirement, a whole
 *   reconcile pass. It may take `withContainer` inside (reconcile stops).
 * - `withContainer(id)`: Docker start/stop/removal of the sandbox's existing
 *   container; a stop takes it alone, not inside `serialized`.
 * - `holdSandbox(id)`: both of the last two in that order (a container's
 *   create+start step).
 * A stop publishes its intent before it waits for any permit, so a worker
 * holding one sees it at its next check.
 */
export interface LifecycleShape {
  /** The singleton check, the row insert and the worker hand-off of a create or restart. */
  readonly admit: Held
  /** Status writes of workers and stops, retirement, a reconcile pass. */
  readonly serialized: Held
  /** Docker start/stop/removal of one sandbox's existing container. */
  readonly withContainer: <A, E, R>(id: SandboxId, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The lifecycle permit, then the sandbox's container permit: a container's create+start. */
  readonly holdSandbox: <A, E, R>(id: SandboxId, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Drops the sandbox's container permit once its row is deleted. */
  readonly forgetContainer: (id: SandboxId) => Effect.Effect<void>

  /**
   * Forks `work` into the service's scope; it is registered before its first
   * step. `onEnd` runs once the worker ends, even one interrupted before it began.
   */
  readonly spawnWorker: (id: SandboxId, work: Effect.Effect<void>, onEnd?: Effect.Effect<void>) => Effect.Effect<void>
  readonly hasWorker: (id: SandboxId) => Effect.Effect<boolean>
  readonly interruptWorkers: (id: SandboxId) => Effect.Effect<void>
  readonly awaitIdle: (id: SandboxId) => Effect.Effect<void>

  /** Published before any permit is awaited; workers check it at every status write. */
  readonly requestStop: (id: SandboxId) => Effect.Effect<void>
  readonly clearStop: (id: SandboxId) => Effect.Effect<void>
  readonly failIfStopRequested: (id: SandboxId) => Effect.Effect<void, StopWon>

  readonly getRow: (id: SandboxId) => Effect.Effect<Sandbox, SandboxNotFound | StoreFailures>
  /** Writes a status and its journal entry in one transaction (the caller holds the lifecycle permit), then publishes it. */
  readonly writeStatus: (id: SandboxId, to: SandboxStatus, fields?: Omit<StatusUpdate, "to">) => Write<Sandbox>
  /** A worker's status write: under the lifecycle permit, and only while no stop is requested. */
  readonly advance: (
    id: SandboxId,
    to: SandboxStatus,
    fields?: Omit<StatusUpdate, "to">
  ) => Effect.Effect<Sandbox, StopWon | StoreFailures | SandboxNotFound>
  /** Appends a progress line to the journal and publishes it. */
  readonly emit: (id: SandboxId, status: SandboxStatus, line: string) => Write<void>
  /** A progress line: logged and kept as the row's detail in one transaction, then published. */
  readonly progress: (
    row: Pick<Sandbox, "id" | "status">,
    line: string
  ) => Effect.Effect<void, SandboxNotFound | StoreFailure>
  readonly events: Stream.Stream<SandboxEvent>
}

/**
 * The lifecycle's shared state, as operations: the permits that serialize it
 * (in the order documented on LifecycleShape), the workers in flight, the
 * stop requests, and the journal of status changes and progress.
 * SandboxService and the reconcile passes both work through it.
 */
export class Lifecycle extends Context.Service<Lifecycle, LifecycleShape>()("prbox/engine/Lifecycle") {
  static readonly layer = Layer.effect(
    Lifecycle,
    Effect.gen(function* () {
      const repo = yield* SandboxRepo
      // Workers outlive the request that started them; closing the layer interrupts them.
      const workerScope = yield* Effect.scope
      const admission = yield* Semaphore.make(1)
      const lifecycle = yield* Semaphore.make(1)
      const containerPermits = new Map<SandboxId, Semaphore.Semaphore>()
      const workers = yield* Ref.make<ReadonlyMap<SandboxId, ReadonlySet<Fiber.Fiber<void>>>>(new Map())
      const stopRequests = yield* Ref.make<ReadonlySet<SandboxId>>(new Set())
      const events = yield* PubSub.unbounded<SandboxEvent>()

      const workersOf = (id: SandboxId) =>
        Effect.map(Ref.get(workers), (map): ReadonlySet<Fiber.Fiber<void>> => map.get(id) ?? new Set())

      const removeWorker = (id: SandboxId, fiber: Fiber.Fiber<void>) =>
        Ref.update(workers, (map) => {
          const rest = new Set(map.get(id))
          rest.delete(fiber)
          const next = new Map(map)
          if (rest.size === 0) next.delete(id)
          else next.set(id, rest)
          return next
        })

      const failIfStopRequested = (id: SandboxId) =>
        Effect.flatMap(Ref.get(stopRequests), (set) => (set.has(id) ? Effect.fail(new StopWon()) : Effect.void))

      const getRow = (id: SandboxId) =>
        Effect.flatMap(
          repo.findById(id),
          Option.match({ onNone: () => Effect.fail(new SandboxNotFound({ id })), onSome: Effect.succeed })
        )

      // The journal: an entry is written to the log (which numbers it), with
      // its row change in the same transaction, and published once committed.
      const publish = (event: SandboxEvent) => Effect.asVoid(PubSub.publish(events, event))

      const emit = (id: SandboxId, status: SandboxStatus, line: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) =>
          Effect.flatMap(repo.appendLog(id, { _tag: "Progress", at, status, line }), publish)
        )

      // One transaction: the status write and, when it is a status change
      // (not a write that only records a container id or a port), its entry.
      const writeStatus = (id: SandboxId, to: SandboxStatus, fields: Omit<StatusUpdate, "to"> = {}) =>
        Effect.gen(function* () {
          const at = yield* Clock.currentTimeMillis
          const { row, logged } = yield* repo.updateStatusAndLog(id, { ...fields, to }, at)
          if (Option.isSome(logged)) yield* publish(logged.value)
          return row
        })

      const containerPermit = (id: SandboxId) => {
        const existing = containerPermits.get(id)
        if (existing !== undefined) return existing
        const created = Semaphore.makeUnsafe(1)
        containerPermits.set(id, created)
        return created
      }
      const withContainer = <A, E, R>(id: SandboxId, effect: Effect.Effect<A, E, R>) =>
        Effect.suspend(() => containerPermit(id).withPermit(effect))

      return Lifecycle.of({
        admit: (effect) => admission.withPermit(effect),
        serialized: (effect) => lifecycle.withPermit(effect),
        withContainer,
        holdSandbox: (id, effect) => lifecycle.withPermit(withContainer(id, effect)),
        forgetContainer: (id) => Effect.sync(() => containerPermits.delete(id)),
        spawnWorker: (id, work, onEnd = Effect.void) =>
          Effect.gen(function* () {
            const registered = yield* Deferred.make<void>()
            const fiber: Fiber.Fiber<void> = yield* Deferred.await(registered).pipe(
              Effect.andThen(work),
              Effect.ensuring(Effect.suspend(() => Effect.andThen(removeWorker(id, fiber), onEnd))),
              Effect.forkIn(workerScope)
            )
            yield* Ref.update(workers, (map) => new Map(map).set(id, new Set(map.get(id)).add(fiber)))
            yield* Deferred.succeed(registered, undefined)
          }),
        hasWorker: (id) => Effect.map(workersOf(id), (set) => set.size > 0),
        interruptWorkers: (id) => Effect.flatMap(workersOf(id), Fiber.interruptAll),
        awaitIdle: (id) => Effect.flatMap(workersOf(id), (set) => Effect.forEach(set, Fiber.await, { discard: true })),
        requestStop: (id) => Ref.update(stopRequests, (set) => new Set(set).add(id)),
        clearStop: (id) =>
          Ref.update(stopRequests, (set) => {
            const next = new Set(set)
            next.delete(id)
            return next
          }),
        failIfStopRequested,
        getRow,
        writeStatus,
        advance: (id, to, fields = {}) =>
          lifecycle.withPermit(Effect.andThen(failIfStopRequested(id), writeStatus(id, to, fields))),
        emit,
        progress: (row, line) =>
          Clock.currentTimeMillis.pipe(
            Effect.flatMap((at) => repo.updateDetailAndLog(row.id, { _tag: "Progress", at, status: row.status, line })),
            Effect.flatMap(publish),
            mapStoreErrors("sandbox.progress")
          ),
        events: Stream.fromPubSub(events)
      })
    })
  )
}
