import { isSettling, type SandboxEvent } from "@prbox/domain"
import type { SandboxView } from "@prbox/protocol"
import { Data, Effect, Option, Schema, Stream } from "effect"
import * as Backoff from "./Backoff.ts"
import { type ClientError, ProtocolError } from "./ClientErrors.ts"
import type { PrboxClientShape } from "./PrboxClient.ts"

/**
 * The daemon went away while a command followed a sandbox: said as that, with
 * what to do next, rather than as the broken stream's decode error.
 */
export class DaemonStopped extends Schema.TaggedError<DaemonStopped>()("DaemonStopped", {
  message: Schema.String,
  sandboxId: Schema.String
}) {}

/** The event stream ended (or broke) before the sandbox settled, and the daemon still answers. */
class StreamEnded extends Data.TaggedError("StreamEnded") {}

/** How often a stream that ends while the daemon still answers is opened again. */
const REOPENS = 5

export interface FollowOptions {
  /** Events before this instant (the command's start) are replayed but not shown. */
  readonly since: number
  /**
   * Settle only after the sandbox went to `starting`: a rebuild stops the
   * sandbox itself before its restart, and that stop is not the outcome.
   */
  readonly afterStarting?: boolean
  /** Each event from `since` on, in order (the settling status change included). */
  readonly onEvent?: (event: SandboxEvent) => void
}

/** Failures that mean "the connection broke", not "the daemon said no". */
const isConnectionLoss = (error: ClientError): boolean =>
  error._tag === "DaemonUnreachable" || error._tag === "ProtocolError"

/**
 * Follows a create or restart until the sandbox settles (running, error or
 * stopped: a `StatusChanged` that `isSettling`) and returns its view then.
 * The daemon replays the log first, so nothing that happened before the
 * stream opened is missed; a stream that breaks is reopened after the last
 * event seen, and a daemon that no longer answers fails with DaemonStopped.
 */
export const followUntilSettled = Effect.fn("Follow.followUntilSettled")(function* (
  client: PrboxClientShape,
  view: SandboxView,
  options: FollowOptions
) {
  if (view.status === "running") return view
  const stopped = new DaemonStopped({
    message: `the daemon stopped while following sandbox ${view.id}; run \`prbox daemon logs\`, then \`prbox status ${view.id}\``,
    sandboxId: view.id
  })
  /** The stream broke or ended early: DaemonStopped when nothing answers any more, else open it again. */
  const probe = Effect.flatMap(
    Effect.result(client.version),
    (answer): Effect.Effect<never, DaemonStopped | StreamEnded> =>
      answer._tag === "Failure" && answer.failure._tag === "DaemonUnreachable"
        ? Effect.fail(stopped)
        : Effect.fail(new StreamEnded())
  )
  const lost = (error: ClientError): Effect.Effect<never, ClientError | DaemonStopped | StreamEnded> =>
    isConnectionLoss(error) ? probe : Effect.fail(error)

  let after = 0
  let started = options.afterStarting !== true
  const settling = Effect.suspend(() =>
    client.events(view.id, { after }).pipe(
      Stream.tap((event) =>
        Effect.sync(() => {
          after = event.seq
          if (event.at >= options.since) options.onEvent?.(event)
        })
      ),
      Stream.filter((event) => {
        if (event.at < options.since) return false
        if (event._tag === "StatusChanged" && event.status === "starting") started = true
        return started && isSettling(event)
      }),
      Stream.runHead
    )
  ).pipe(
    Effect.catch(lost),
    Effect.flatMap((event) => (Option.isSome(event) ? Effect.void : probe))
  )
  yield* settling.pipe(
    Effect.retry({ schedule: Backoff.reconnect, times: REOPENS, while: (error) => error._tag === "StreamEnded" }),
    Effect.catchTag("StreamEnded", () =>
      Effect.fail(new ProtocolError({ message: `the daemon keeps closing the event stream of sandbox ${view.id}` }))
    )
  )
  return yield* client
    .get(view.id)
    .pipe(
      Effect.catch(
        (error): Effect.Effect<never, ClientError | DaemonStopped> =>
          error._tag === "DaemonUnreachable" ? Effect.fail(stopped) : Effect.fail(error)
      )
    )
})
