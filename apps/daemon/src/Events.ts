import type { SandboxEvent, SandboxId } from "@prbox/domain"
import type { SandboxServiceShape } from "@prbox/engine"
import type { ApiError } from "@prbox/protocol"
import { Effect, Queue, Stream } from "effect"
import { api } from "./Mapping.ts"

const PAGE = 500

/**
 * A sandbox's events after `after`: its log, then its live events, without a
 * gap or a duplicate. The log holds the events as they were published (each
 * of its kind, with its status), so the replay is the log itself. The live
 * subscription is taken before the log is read (an event is appended to the
 * log before it is published), and live events the replay already covered
 * are dropped by sequence number.
 */
export const sandboxEvents = (
  sandboxes: SandboxServiceShape,
  id: SandboxId,
  after: number
): Stream.Stream<SandboxEvent, ApiError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const live = yield* Queue.unbounded<SandboxEvent>()
      // startImmediately: the fiber subscribes before this effect goes on to read the log.
      yield* sandboxes.events.pipe(
        Stream.filter((event) => event.sandboxId === id),
        Stream.runForEach((event) => Queue.offer(live, event)),
        Effect.forkScoped({ startImmediately: true })
      )
      const replayed: Array<SandboxEvent> = []
      let cursor = after
      while (true) {
        const page = yield* api(sandboxes.logs(id, { afterSeq: cursor, limit: PAGE }))
        replayed.push(...page)
        cursor = page.at(-1)?.seq ?? cursor
        if (page.length < PAGE) break
      }
      return Stream.concat(
        Stream.fromIterable(replayed),
        Stream.fromQueue(live).pipe(Stream.filter((event) => event.seq > cursor))
      )
    })
  )
