import type { Prebuild } from "@prbox/domain"
import { prebuildStatus, SandboxService, type SandboxServiceShape, safeReason } from "@prbox/engine"
import { type OpenRequest, PrboxApi, type PrebuildEvent, type PrebuildView } from "@prbox/protocol"
import { Effect, Queue, Stream } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { api } from "./Mapping.ts"

const viewOf = (row: Prebuild, spared: ReadonlySet<string> = new Set()): PrebuildView => ({
  id: row.id,
  key: row.key,
  host: row.host,
  repository: row.repository,
  baseBranch: row.baseBranch,
  baseCommit: row.baseCommit,
  state: row.state,
  // Recorded as a safe reason when it failed (never a step's output).
  reason: row.error,
  sizeBytes: row.sizeBytes,
  startedAt: row.startedAt,
  readyAt: row.readyAt,
  usedAt: row.usedAt,
  spare: spared.has(row.id)
})

/**
 * `POST /v1/prebuilds`: the engine's make-now with its progress lines as
 * they come, then how it ended; any failure (bad input, off, today's path,
 * a fetch, a step) is the last event with its safe reason. The build is the
 * request's: a client that goes away ends it (its row says interrupted).
 */
const makeNow = (sandboxes: SandboxServiceShape, request: OpenRequest): Stream.Stream<PrebuildEvent> =>
  Stream.callback<PrebuildEvent>((queue) =>
    sandboxes
      .prebuild(request, (line) => Effect.asVoid(Queue.offer(queue, { _tag: "Progress", line })))
      .pipe(
        Effect.map(
          ({ outcome, prebuild }): PrebuildEvent => ({ _tag: "Finished", outcome, prebuild: viewOf(prebuild) })
        ),
        Effect.catch((error) => Effect.succeed<PrebuildEvent>({ _tag: "Failed", reason: safeReason(error) })),
        Effect.flatMap((last) => Queue.offer(queue, last)),
        Effect.andThen(Queue.end(queue))
      )
  )

/** `GET /v1/prebuilds` (and `POST`, makeNow): the engine's prebuild rows and their disk use, for `prbox prebuild --status` and doctor. */
export const PrebuildsHandlers = HttpApiBuilder.group(PrboxApi, "prebuilds", (handlers) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Effect.Services<ReturnType<typeof prebuildStatus>>>()
    const sandboxes = yield* SandboxService
    return handlers
      .handle("status", () =>
        prebuildStatus().pipe(
          Effect.map(({ spared, ...status }) => ({
            ...status,
            prebuilds: status.prebuilds.map((row) => viewOf(row, spared))
          })),
          Effect.provideContext(context),
          api
        )
      )
      .handle("make", ({ payload }) => Effect.succeed(makeNow(sandboxes, payload)))
  })
)
