import {
  Backoff,
  type ClientError,
  clientHome,
  ensureDaemon,
  Launch,
  NodePrboxClient,
  PrboxClient,
  type PrboxClientShape
} from "@prbox/client"
import type { VersionInfo } from "@prbox/protocol"
import { Cause, Duration, Effect, Exit, Fiber, ManagedRuntime, Option, Queue, Stream } from "effect"
import type { Connection } from "./Model.ts"
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

/** Ages in the tree move on, and a change missed while the event stream was being opened shows up. */
const PERIODIC_REFRESH = Duration.seconds(30)
/** After a session that was up ends: reconnect soon (a restarting daemon), then back off. */
const AFTER_SESSION = Duration.millis(250)

/** Every failure the client library reports: a stable tag and a message safe to show. */
type Tagged = { readonly _tag: string; readonly message: string }

const toError = (cause: Cause.Cause<Tagged>): Error => {
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
  /** Asks an up session for a fresh list now. */
  #wake: Queue.Queue<void> | undefined
  /** Cuts the back-off short while the daemon is not up (Refresh, Start Daemon). */
  #retryNow: Queue.Queue<void> | undefined
  #retargeting: Promise<void> = Promise.resolve()

  constructor(settings: Settings) {
    this.#settings = settings
    this.#runtime = ManagedRuntime.make(NodePrboxClient.layer({ socketPath: settings.socketPath }))
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
  call<A, E extends Tagged = ClientError>(
    body: (client: PrboxClientShape) => Effect.Effect<A, E>,
    signal?: AbortSignal
  ): Promise<A> {
    return this.#run(PrboxClient.use(body), signal)
  }

  /** The running daemon, started with the `prboxd` executable (setting `prbox.daemonPath`) when none answers. */
  start(): Promise<{ readonly info: VersionInfo; readonly started: boolean }> {
    const { home, socketPath, daemonPath } = this.#settings
    return this.#run(ensureDaemon(clientHome(home, socketPath), Launch.executable(daemonPath ?? "prboxd"), () => {}))
  }

  async #run<A, E extends Tagged>(effect: Effect.Effect<A, E, PrboxClient>, signal?: AbortSignal): Promise<A> {
    const exit = await this.#runtime.runPromiseExit(effect, signal === undefined ? undefined : { signal })
    if (Exit.isSuccess(exit)) return exit.value
    throw toError(exit.cause)
  }

  /** Starts following the daemon (idempotent). */
  watch(): void {
    if (this.#watcher !== undefined) return
    const wake = Effect.runSync(Queue.sliding<void>(1))
    const retryNow = Effect.runSync(Queue.sliding<void>(1))
    this.#wake = wake
    this.#retryNow = retryNow
    this.#watcher = this.#runtime.runFork(this.#watchLoop(wake, retryNow))
  }

  refresh(): void {
    const queue = this.#connection._tag === "up" ? this.#wake : this.#retryNow
    if (queue !== undefined) Queue.offerUnsafe(queue, undefined)
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
    this.#runtime = ManagedRuntime.make(NodePrboxClient.layer({ socketPath: settings.socketPath }))
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
    this.#retryNow = undefined
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

  /**
   * Sessions, one after another. A session that never got up fails and is
   * retried on the `Backoff.reconnect` schedule (which grows only while none
   * gets through); one that was up ends the retry, so the schedule starts
   * over. `retryNow` cuts a back-off short.
   */
  #watchLoop(wake: Queue.Queue<void>, retryNow: Queue.Queue<void>): Effect.Effect<never, never, PrboxClient> {
    const self = this
    return Effect.gen(function* () {
      const client = yield* PrboxClient
      const attempt = Effect.suspend(() => self.#session(client, wake)).pipe(
        Effect.catch((error) => {
          const wasUp = self.#connection._tag === "up"
          self.#publish(
            error._tag === "DaemonUnreachable"
              ? { _tag: "down", message: error.message }
              : { _tag: "failed", message: error.message }
          )
          return wasUp ? Effect.void : Effect.fail(error)
        })
      )
      const untilOneWasUp = attempt.pipe(
        Effect.retry(Backoff.reconnect),
        // The schedule never ends, so the retry never fails.
        Effect.orDie,
        Effect.andThen(Effect.sleep(AFTER_SESSION))
      )
      return yield* Effect.forever(Effect.raceFirst(untilOneWasUp, Queue.take(retryNow)))
    })
  }
}
