import { Backoff, type ClientError, type PrboxClientShape } from "@prbox/client"
import { describeEvent } from "@prbox/domain"
import { Data, Duration, Effect, Stream } from "effect"
import { Cancelled, type Daemon, DaemonError } from "./Daemon.ts"
import type { SandboxEvent, SandboxId } from "./Protocol.ts"

/** Where a followed log goes: an output channel in VS Code, a recorder in tests. */
export interface LogSink {
  readonly append: (line: string) => void
  readonly show: () => void
  readonly dispose: () => void
}

const logLine = (event: SandboxEvent): string =>
  `${new Date(event.at).toISOString().slice(11, 19)} ${describeEvent(event)}`

/** A connection ended before it showed a line: try again after the back-off. */
class Reconnect extends Data.TaggedError("Reconnect") {}

/** A connection that showed lines and then ended: the daemon restarting, most likely. */
const RECONNECT_AFTER_LINES = Duration.millis(250)

/**
 * One output channel per sandbox that follows its log: the daemon replays the
 * log and then streams live lines; when the daemon goes away the follower
 * resumes after the last line it showed, so nothing repeats and nothing is
 * missed. It ends when the sandbox is deleted or the extension stops.
 */
export class LogFollowers {
  readonly #daemon: Daemon
  readonly #makeSink: (name: string) => LogSink
  readonly #follows = new Map<SandboxId, { readonly sink: LogSink; readonly stop: AbortController }>()

  constructor(daemon: Daemon, makeSink: (name: string) => LogSink) {
    this.#daemon = daemon
    this.#makeSink = makeSink
  }

  /** Shows the sandbox's log, starting to follow it unless it already is; resolves when following ends. */
  show(id: SandboxId, name: string): Promise<void> {
    const existing = this.#follows.get(id)
    if (existing !== undefined) {
      existing.sink.show()
      return Promise.resolve()
    }
    const sink = this.#makeSink(`prbox: ${name}`)
    const stop = new AbortController()
    this.#follows.set(id, { sink, stop })
    sink.show()
    return this.#follow(id, sink, stop.signal)
  }

  dispose(): void {
    for (const { sink, stop } of this.#follows.values()) {
      stop.abort()
      sink.dispose()
    }
    this.#follows.clear()
  }

  async #follow(id: SandboxId, sink: LogSink, signal: AbortSignal): Promise<void> {
    try {
      await this.#daemon.call((client) => followLog(client, id, sink), signal)
    } catch (error) {
      if (error instanceof Cancelled) return
      if (error instanceof DaemonError && error.tag === "NotFound") {
        sink.append("-- the sandbox was deleted; no longer following --")
        this.#follows.delete(id)
        return
      }
      throw error
    }
  }
}

/**
 * Follows one sandbox's log for good: each connection resumes after the last
 * line shown. A connection that showed nothing is retried on the
 * `Backoff.reconnect` schedule; one that showed lines starts the schedule
 * over. Fails only when the sandbox is gone (NotFound).
 */
const followLog = (client: PrboxClientShape, id: SandboxId, sink: LogSink): Effect.Effect<never, ClientError> => {
  let after = 0
  let told = false
  const connection = Effect.suspend(() => {
    let shown = false
    return client.events(id, { after }).pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          sink.append(logLine(event))
          after = event.seq
          shown = true
          told = false
        })
      ),
      Effect.catch((error): Effect.Effect<void, ClientError> => {
        if (error._tag === "NotFound") return Effect.fail(error)
        // Said once per outage, not once per attempt.
        if (!told) sink.append(`-- ${error.message}; retrying --`)
        told = true
        return shown ? Effect.void : Effect.fail(error)
      }),
      // The stream ended (the daemon stopped): connect again.
      Effect.andThen(
        Effect.suspend((): Effect.Effect<void, Reconnect> => (shown ? Effect.void : Effect.fail(new Reconnect())))
      )
    )
  })
  const untilLinesShown = connection.pipe(
    Effect.retry({
      schedule: Backoff.reconnect,
      while: (error: ClientError | Reconnect) => error._tag !== "NotFound"
    }),
    Effect.andThen(Effect.sleep(RECONNECT_AFTER_LINES))
  )
  // Only NotFound ends the retries (the schedule itself never ends), so Reconnect never gets here.
  return Effect.forever(untilLinesShown).pipe(
    Effect.catch((error) => (error._tag === "Reconnect" ? Effect.die(error) : Effect.fail(error)))
  )
}
