import type { Prebuild } from "@prbox/domain"
import { prebuildStatus } from "@prbox/engine"
import { PrboxApi, type PrebuildView } from "@prbox/protocol"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { api } from "./Mapping.ts"

const viewOf = (row: Prebuild): PrebuildView => ({
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
  usedAt: row.usedAt
})

/** `GET /v1/prebuilds`: the engine's prebuild rows and their disk use, for `prbox prebuild --status` and doctor. */
export const PrebuildsHandlers = HttpApiBuilder.group(PrboxApi, "prebuilds", (handlers) =>
  Effect.gen(function* () {
    const context = yield* Effect.context<Effect.Services<ReturnType<typeof prebuildStatus>>>()
    return handlers.handle("status", () =>
      prebuildStatus().pipe(
        Effect.map((status) => ({ ...status, prebuilds: status.prebuilds.map(viewOf) })),
        Effect.provideContext(context),
        api
      )
    )
  })
)
