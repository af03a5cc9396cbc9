import { Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { CodeServerHealth, type Health } from "../CodeServerHealth.ts"
import { RuntimeError } from "../Errors.ts"

const HEALTH_TIMEOUT = "2 seconds"

/** `/healthz`'s `lastHeartbeat`, when it is a number. */
const heartbeatOf = (body: unknown): Health => ({
  lastHeartbeat:
    typeof body === "object" && body !== null && "lastHeartbeat" in body && typeof body.lastHeartbeat === "number"
      ? body.lastHeartbeat
      : undefined
})

/** CodeServerHealth over HTTP (fetch), each probe bounded in time. */
export const layer = Layer.effect(
  CodeServerHealth,
  Effect.gen(function* () {
    const http = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)
    return CodeServerHealth.of({
      probe: (hostPort) =>
        http.get(`http://127.0.0.1:${hostPort}/healthz`).pipe(
          Effect.flatMap((response) => response.json),
          Effect.map(heartbeatOf),
          Effect.mapError((error) => new RuntimeError({ operation: "health", detail: error.message })),
          Effect.timeoutOrElse({
            duration: HEALTH_TIMEOUT,
            orElse: () => Effect.fail(new RuntimeError({ operation: "health", detail: "no answer" }))
          }),
          Effect.withSpan("CodeServerHealth.probe")
        )
    })
  })
).pipe(Layer.provide(FetchHttpClient.layer))
