import {
  InvalidTransition,
  type Sandbox,
  type SandboxEvent,
  type SandboxId,
  SandboxNotFound,
  type SandboxStatus
} from "@prbox/domain"
import {
  LiveSandboxExists,
  type NewLogEntry,
  RowDecodeError,
  SandboxRepo,
  type StatusUpdate,
  StoreError
} from "@prbox/store"
import { Clock, Context, Deferred, Effect, Fiber, Layer, Option, PubSub, Ref, Schema, Semaphore, Stream } from "effect"
import { StoreFailure } from "./SandboxService.ts"

/** A stop was requested: the worker ends quietly and the stop writes the outcome. */
export class StopWon extends Schema.TaggedError<StopWon>()("StopWon", {}) {}

type StoreFailures = StoreError | RowDecodeError | LiveSandboxExists | InvalidTransition

const isStoreFailure = (error: unknown): error is StoreFailures =>
  error instanceof StoreError ||
  error instanceof RowDecodeError ||
  error instanceof LiveSandboxExists ||
  error instanceof InvalidTransition

/** Store failures other than "not found" surface as one engine error. */
export const mapStoreErrors =
  (operation: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, StoreFailures> | StoreFailure, R> =>
    Effect.mapError(effect, (error) =>
      isStoreFailure(error)
        ? new StoreFailure({ operation, detail: error.message })
        : (error as Exclude<E, StoreFailures>)
    )

/**
 * The row's `error`: our errors' messages are built to be safe (ids, fixed
 * reasons, no secrets); anything else is reduced to its tag.
 */
export const safeReason = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error) {
    const message = (error as { readonly message?: unknown }).message
    return typeof message === "string" && message.length > 0 ? message.slice(0, 500) : String(error._tag)
  }
  return "unexpected failure"
}

type Write<A> = Effect.Effect<A, StoreFailures | SandboxNotFound>

export interface LifecycleShape {
  /** The singleton check, the row insert and the worker hand-off of a create. */
  readonly admission: Semaphore.Semaphore
  /** Status writes of workers and stops, a container's create+start, retirement, a reconcile pass. */
  readonly lifecycle: Semaphore.Semaphore
  /** Docker start/stop of one sandbox's existing container. */
  readonly containerPermit: (id: SandboxId) => Semaphore.Semaphore
  readonly forgetContainerPermit: (id: SandboxId) => Effect.Effect<void>

  /** Forks `work` into the service's scope; it is registered before its first step. */
  readonly spawnWorker: (id: SandboxId, work: Effect.Effect<void>) => Effect.Effect<void>
  readonly hasWorker: (id: SandboxId) => Effect.Effect<boolean>
  readonly interruptWorkers: (id: SandboxId) => Effect.Effect<void>
  readonly awaitIdle: (id: SandboxId) => Effect.Effect<void>

  /** Published before any permit is awaited; workers check it at every status write. */
  readonly requestStop: (id: SandboxId) => Effect.Effect<void>
  readonly clearStop: (id: SandboxId) => Effect.Effect<void>
  readonly failIfStopRequested: (id: SandboxId) => Effect.Effect<void, StopWon>

  readonly getRow: (id: SandboxId) => Effect.Effect<Sandbox, SandboxNotFound | StoreFailures>
  /** Writes a status (the caller holds the lifecycle permit) and publishes it. */
  readonly writeStatus: (id: SandboxId, to: SandboxStatus, fields?: Omit<StatusUpdate, "to">) => Write<Sandbox>
  /** A worker's status write: under the lifecycle permit, and only while no stop is requested. */
  readonly advance: (
    id: SandboxId,
    to: SandboxStatus,
    fields?: Omit<StatusUpdate, "to">
  ) => Effect.Effect<Sandbox, StopWon | StoreFailures | SandboxNotFound>
  /** Appends a progress line to the journal and publishes it. */
  readonly emit: (id: SandboxId, status: SandboxStatus, line: string) => Write<void>
  /** A progress line: logged, published, and kept as the row's detail. */
  readonly progress: (
    row: Pick<Sandbox, "id" | "status">,
    line: string
  ) => Effect.Effect<void, SandboxNotFound | StoreFailure>
  readonly events: Stream.Stream<SandboxEvent>
}

/**
 * The lifecycle's shared state: the permits that serialize it, the workers in
 * flight, the stop requests, and the journal of status changes and progress.
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

      /** The journal: an entry is appended to the log (which numbers it) before it is published. */
      const journal = (id: SandboxId, entry: NewLogEntry) =>
        Effect.flatMap(repo.appendLog(id, entry), (event) => PubSub.publish(events, event))

      const emit = (id: SandboxId, status: SandboxStatus, line: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (at) => journal(id, { _tag: "Progress", at, status, line }))

      const writeStatus = (id: SandboxId, to: SandboxStatus, fields: Omit<StatusUpdate, "to"> = {}) =>
        Effect.gen(function* () {
          const before = yield* repo.findById(id)
          const row = yield* repo.updateStatus(id, { ...fields, to })
          // A write that only records fields (a container id, a port) is not a status change.
          if (Option.getOrUndefined(before)?.status !== to || fields.error !== undefined) {
            const at = yield* Clock.currentTimeMillis
            yield* journal(id, { _tag: "StatusChanged", at, status: to, error: row.error })
          }
          return row
        })

      return Lifecycle.of({
        admission,
        lifecycle,
        containerPermit: (id) => {
          const existing = containerPermits.get(id)
          if (existing !== undefined) return existing
          const created = Semaphore.makeUnsafe(1)
          containerPermits.set(id, created)
          return created
        },
        forgetContainerPermit: (id) => Effect.sync(() => containerPermits.delete(id)),
        spawnWorker: (id, work) =>
          Effect.gen(function* () {
            const registered = yield* Deferred.make<void>()
            const fiber: Fiber.Fiber<void> = yield* Deferred.await(registered).pipe(
              Effect.andThen(work),
              Effect.ensuring(Effect.suspend(() => removeWorker(id, fiber))),
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
          Effect.andThen(emit(row.id, row.status, line), repo.updateDetail(row.id, line)).pipe(
            mapStoreErrors("sandbox.progress")
          ),
        events: Stream.fromPubSub(events)
      })
    })
  )
}
