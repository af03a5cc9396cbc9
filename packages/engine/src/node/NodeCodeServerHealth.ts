import { get } from "node:http"
import { Effect, Layer } from "effect"
import { CodeServerHealth, type Health } from "../CodeServerHealth.ts"
import { RuntimeError } from "../Errors.ts"

const HEALTH_TIMEOUT = "2 seconds"
/** More than any `/healthz` answer: the container writes it, so what is read is bounded. */
const MAX_BODY_BYTES = 64 * 1024

const failure = (detail: string) => new RuntimeError({ operation: "health", detail })

/** `/healthz`'s `lastHeartbeat`, when it is a number. */
const heartbeatOf = (body: unknown): Health => ({
  lastHeartbeat:
    typeof body === "object" && body !== null && "lastHeartbeat" in body && typeof body.lastHeartbeat === "number"
      ? body.lastHeartbeat
      : undefined
})

/**
 * One GET of `http://127.0.0.1:<port>/healthz` with Node's http: a 200 and
 * its body, parsed as JSON. Plain node:http, not fetch: Node's fetch (undici,
 * with its TLS, HTTP/2 and worker modules) would stay resident in the
 * daemon from the first open on, for a request to this machine.
 */
const healthz = (hostPort: number) =>
  Effect.callback<unknown, RuntimeError>((callback) => {
    let settled = false
    const resume = (effect: Effect.Effect<unknown, RuntimeError>) => {
      if (settled) return
      settled = true
      callback(effect)
    }
    const request = get({ host: "127.0.0.1", port: hostPort, path: "/healthz", agent: false }, (response) => {
      if (response.statusCode !== 200) {
        response.resume()
        return resume(Effect.fail(failure(`/healthz answered ${response.statusCode}`)))
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > MAX_BODY_BYTES) {
          request.destroy()
          return resume(Effect.fail(failure(`/healthz answered more than ${MAX_BODY_BYTES} bytes`)))
        }
        chunks.push(chunk)
      })
      response.on("end", () => {
        try {
          resume(Effect.succeed(JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown))
        } catch {
          resume(Effect.fail(failure("/healthz answered no JSON")))
        }
      })
      response.on("error", (error) => resume(Effect.fail(failure(error.message))))
    })
    request.on("error", (error) => resume(Effect.fail(failure(error.message))))
    return Effect.sync(() => request.destroy())
  })

/** CodeServerHealth over HTTP, each probe bounded in time. */
export const layer = Layer.succeed(
  CodeServerHealth,
  CodeServerHealth.of({
    probe: (hostPort) =>
      healthz(hostPort).pipe(
        Effect.map(heartbeatOf),
        Effect.timeoutOrElse({
          duration: HEALTH_TIMEOUT,
          orElse: () => Effect.fail(failure("no answer"))
        }),
        Effect.withSpan("CodeServerHealth.probe")
      )
  })
)
