import { type SandboxId, SandboxStatus } from "@prbox/domain"
import type { SandboxEvent, SandboxServiceShape } from "@prbox/engine"
import type { ApiError } from "@prbox/protocol"
import { Effect, Queue, Schema, Stream } from "effect"
import { api } from "./Mapping.ts"

const PAGE = 500
const isStatus = Schema.is(SandboxStatus)

/**
 * The engine writes every status change to the log as `status: <status>`
 * (optionally followed by ` (<error>)`); a replayed line carries the status
 * of the last such line before it.
 */
export const statusOfLine = (line: string): SandboxStatus | undefined => {
  const match = /^status: ([a-z]+)(?: \(|$)/.exec(line)
  const status = match?.[1]
  return status !== undefined && isStatus(status) ? status : undefined
}

/**
 * A sandbox's events after `after`: its log, then its live events, without a
 * gap or a duplicate. The live subscription is taken before the log is read
 * (an event is appended to the log before it is published), and live events
 * the replay already covered are dropped by sequence number.
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
      let status: SandboxStatus = "creating"
      let cursor = 0
      while (true) {
        const page = yield* api(sandboxes.logs(id, { afterSeq: cursor, limit: PAGE }))
        for (const entry of page) {
          status = statusOfLine(entry.line) ?? status
          if (entry.seq > after) {
            replayed.push({ seq: entry.seq, sandboxId: id, at: entry.at, status, line: entry.line })
          }
          cursor = entry.seq
        }
        if (page.length < PAGE) break
      }
      const last = Math.max(after, cursor)
      return Stream.concat(
        Stream.fromIterable(replayed),
        Stream.fromQueue(live).pipe(Stream.filter((event) => event.seq > last))
      )
    })
  )
