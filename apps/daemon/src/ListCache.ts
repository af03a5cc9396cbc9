import type { SandboxServiceShape } from "@prbox/engine"
import { type ApiError, SandboxList, type SandboxView, toView } from "@prbox/protocol"
import { Effect, Result, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { api } from "./Mapping.ts"

const encodeList = Schema.encodeUnknownResult(SandboxList)

interface Entry {
  readonly generation: number
  readonly body: Uint8Array
}

/**
 * `GET /v1/sandboxes`, answered from the encoded body of the last list while
 * the store's write generation has not moved (per `all` flag): the rows are
 * not read, decoded or encoded again until something was written. The bytes
 * are the ones effect's HttpApi writes for the declared `SandboxList` (its
 * schema's encoding, `JSON.stringify`, `application/json`, status 200).
 *
 * The generation is read before the rows, so a write landing in between
 * makes the entry look older than it is (one spare re-read), never newer.
 * Should the list not encode, the views go back to HttpApi as they are and
 * fail there exactly as they would without the cache.
 */
export const sandboxListCache = (sandboxes: SandboxServiceShape) => {
  const entries = new Map<boolean, Entry>()
  const respond = (body: Uint8Array) =>
    HttpServerResponse.uint8Array(body, { status: 200, contentType: "application/json" })
  return (all: boolean): Effect.Effect<HttpServerResponse.HttpServerResponse | ReadonlyArray<SandboxView>, ApiError> =>
    Effect.gen(function* () {
      const generation = yield* sandboxes.generation
      const cached = entries.get(all)
      if (cached !== undefined && cached.generation === generation) return respond(cached.body)
      const views = (yield* api(all ? sandboxes.listAll : sandboxes.list)).map(toView)
      const encoded = encodeList(views)
      if (Result.isFailure(encoded)) {
        entries.delete(all)
        return views
      }
      const body = Buffer.from(JSON.stringify(encoded.success), "utf8")
      entries.set(all, { generation, body })
      return respond(body)
    })
}
