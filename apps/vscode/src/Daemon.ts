import { Cause, Duration, Effect, Exit, Fiber, ManagedRuntime, Option, Queue, Stream } from "effect"
import type { Connection } from "./Model.ts"
import { Client, type ClientError, PrboxClient, type PrboxClientShape } from "./Protocol.ts"
import type { Settings } from "./Settings.ts"

/** A daemon call that failed: the protocol's error tag and its message (safe to show). */
export class DaemonError extends Error {
  readonly tag: string
  constructor(tag: string, message: string) {
    super(message)
    this.name = "DaemonError"
    this.tag = tag
  }
}

/** The user cancelled (or the extension went away) while a call was in flight. */
export class Cancelled extends Error {
  constructor() {
    super("cancelled")
    this.name = "Cancelled"
  }
}

/** 250 ms, doubling, at most 5 s: quick when the daemon restarts, quiet when it stays down. */
export const backoff = (failures: number): Duration.Duration =>
  Duration.millis(Math.min(5_000, 250 * 2 ** Math.min(failures, 5)))

/** Ages in the tree move on, and a change missed while the event stream was being opened shows up. */
const PERIODIC_REFRESH = Duration.seconds(30)

const toError = (cause: Cause.Cause<ClientError>): Error => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) return new DaemonError(failure.value._tag, failure.value.message)
  if (Cause.hasInterruptsOnly(cause)) return new Cancelled()
  return new Error(`prbox extension bug: ${Cause.pretty(cause)}`)
}

type Runtime = ManagedRuntime.ManagedRuntime<PrboxClient, never>

/**
 * The connection to prboxd for the current settings: typed calls, and a
 * watcher that keeps `connection` current from the daemon's event stream,
 * reconnecting with back-off when the daemon goes away.
 */
export class Daemon {
  #settings: Settings
  #runtime: Runtime
  #connection: Connection = { _tag: "connecting" }
  readonly #listeners = new Set<(connection: Connection) => void>()
  #watcher: Fiber.Fiber<never> | undefined
  /** Asks the watcher for a fresh list now (or to retry at once when the daemon is down). */
  #wake: Queue.Queue<void> | undefined
  #retargeting: Promise<void> = Promise.resolve()

  constructor(settings: Settings) {
    this.#settings = settings
    this.#runtime = ManagedRuntime.make(Client.layer({ socketPath: settings.socketPath }))
  }

  get settings(): Settings {
    return this.#settings
  }

  get connection(): Connection {
    return this.#connection
  }

  /** The rows last listed, empty while the daemon is not up. */
  get views() {
    return this.#connection._tag === "up" ? this.#connection.views : []
  }

  onDidChange(listener: (connection: Connection) => void): { dispose: () => void } {
    this.#listeners.add(listener)
    return { dispose: () => this.#listeners.delete(listener) }
  }

  /** Runs one client call; rejects with `DaemonError`, or `Cancelled` once `signal` aborts. */
  async call<A>(body: (client: PrboxClientShape) => Effect.Effect<A, ClientError>, signal?: AbortSignal): Promise<A> {
    const exit = await this.#runtime.runPromiseExit(
      PrboxClient.use(body),
      signal === undefined ? undefined : { signal }
    )
    if (Exit.isSuccess(exit)) return exit.value
    throw toError(exit.cause)
  }

  /** Starts following the daemon (idempotent). */
  watch(): void {
    if (this.#watcher !== undefined) return
    const wake = Effect.runSync(Queue.sliding<void>(1))
    this.#wake = wake
    this.#watcher = this.#runtime.runFork(this.#watchLoop(wake))
  }

  refresh(): void {
    if (this.#wake !== undefined) Queue.offerUnsafe(this.#wake, undefined)
  }

  /** New settings: a new client, and the watcher starts over against the new socket. */
  retarget(settings: Settings): Promise<void> {
    // One at a time (the settings editor reports a change per keystroke); a failed one does not block the next.
    this.#retargeting = this.#retargeting.catch(() => undefined).then(() => this.#retarget(settings))
    return this.#retargeting
  }

  async #retarget(settings: Settings): Promise<void> {
    const watching = this.#watcher !== undefined
    await this.#stopWatching()
    const old = this.#runtime
    this.#settings = settings
    this.#runtime = ManagedRuntime.make(Client.layer({ socketPath: settings.socketPath }))
    await old.dispose()
    this.#publish({ _tag: "connecting" })
    if (watching) this.watch()
  }

  async dispose(): Promise<void> {
    await this.#retargeting.catch(() => undefined)
    await this.#stopWatching()
    this.#listeners.clear()
    await this.#runtime.dispose()
  }

  async #stopWatching(): Promise<void> {
    const watcher = this.#watcher
    this.#watcher = undefined
    this.#wake = undefined
    if (watcher !== undefined) await Effect.runPromise(Fiber.interrupt(watcher))
  }

  #publish(connection: Connection): void {
    this.#connection = connection
    for (const listener of this.#listeners) listener(connection)
  }

  /**
   * One connection: confirm the daemon speaks our API, list, then list again
   * whenever the event stream says something changed. Events only say *that*
   * something changed; the list is the truth, and a burst of progress lines
   * costs one extra list call, not one per line. Ends when the stream ends.
   */
  #session(client: PrboxClientShape, wake: Queue.Queue<void>): Effect.Effect<void, ClientError> {
    const publish = (connection: Connection) => Effect.sync(() => this.#publish(connection))
    const refresh = Effect.flatMap(client.list({ all: true }), (views) => publish({ _tag: "up", views }))
    const events = client.allEvents.pipe(Stream.runForEach(() => Queue.offer(wake, undefined)))
    const ticks = Effect.forever(Effect.andThen(Effect.sleep(PERIODIC_REFRESH), Queue.offer(wake, undefined)))
    const refresher = Effect.forever(Effect.andThen(Queue.take(wake), refresh))
    return Effect.gen(function* () {
      yield* client.checkVersion
      yield* refresh
      yield* Effect.raceFirst(events, Effect.raceFirst(refresher, ticks))
    })
  }

  #watchLoop(wake: Queue.Queue<void>): Effect.Effect<never, never, PrboxClient> {
    const self = this
    return Effect.gen(function* () {
      const client = yield* PrboxClient
      let failures = 0
      while (true) {
        const result = yield* Effect.result(self.#session(client, wake))
        // Back-off grows only while no session gets through: a daemon that was up gets the shortest wait.
        failures = self.#connection._tag === "up" ? 0 : failures + 1
        if (result._tag === "Failure") {
          const error = result.failure
          self.#publish(
            error._tag === "DaemonUnreachable"
              ? { _tag: "down", message: error.message }
              : { _tag: "failed", message: error.message }
          )
        }
        // A wake (Refresh, Start Daemon) cuts the wait short.
        yield* Effect.raceFirst(Effect.sleep(backoff(failures)), Queue.take(wake))
      }
    })
  }
}
