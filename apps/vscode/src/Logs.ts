import { describeEvent } from "@prbox/domain"
import { Duration, Effect, Stream } from "effect"
import { backoff, Cancelled, type Daemon, DaemonError } from "./Daemon.ts"
import type { SandboxEvent, SandboxId } from "./Protocol.ts"

/** Where a followed log goes: an output channel in VS Code, a recorder in tests. */
export interface LogSink {
  readonly append: (line: string) => void
  readonly show: () => void
  readonly dispose: () => void
}

const logLine = (event: SandboxEvent): string =>
  `${new Date(event.at).toISOString().slice(11, 19)} ${describeEvent(event)}`

const sleep = (duration: Duration.Duration, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, Duration.toMillis(duration))
    function done() {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    signal.addEventListener("abort", done)
  })

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
    let after = 0
    let failures = 0
    while (!signal.aborted) {
      try {
        await this.#daemon.call(
          (client) =>
            client.events(id, { after }).pipe(
              Stream.runForEach((event) =>
                Effect.sync(() => {
                  sink.append(logLine(event))
                  after = event.seq
                  failures = 0
                })
              )
            ),
          signal
        )
      } catch (error) {
        if (error instanceof Cancelled) return
        if (error instanceof DaemonError && error.tag === "NotFound") {
          sink.append("-- the sandbox was deleted; no longer following --")
          this.#follows.delete(id)
          return
        }
        if (failures === 0) sink.append(`-- ${error instanceof Error ? error.message : String(error)}; retrying --`)
        failures++
      }
      await sleep(backoff(failures), signal)
    }
  }
}
