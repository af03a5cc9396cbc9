import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { CodeServerHealth } from "../src/CodeServerHealth.ts"
import * as NodeCodeServerHealth from "../src/node/NodeCodeServerHealth.ts"

/** A server on 127.0.0.1 answering `/healthz` as `answer` does: what a sandbox's container may send back. */
const serving = (answer: (response: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
      const server = createServer((_request, response) => answer(response))
      server.listen(0, "127.0.0.1", () =>
        resume(
          Effect.succeed({
            port: (server.address() as AddressInfo).port,
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      )
    }),
    (server) => Effect.sync(server.close)
  )

const probeOf = (answer: (response: ServerResponse) => void) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { port } = yield* serving(answer)
      const health = yield* CodeServerHealth
      return yield* Effect.result(health.probe(port))
    })
  ).pipe(Effect.provide(NodeCodeServerHealth.layer))

const json = (status: number, body: string) => (response: ServerResponse) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(body)
}

describe("code-server's health, probed over the real loopback", () => {
  it.live("a 200 with a heartbeat gives it; one without gives none", () =>
    Effect.gen(function* () {
      const beat = yield* probeOf(json(200, '{"status":"alive","lastHeartbeat":1700000000000}'))
      assert.deepStrictEqual(beat._tag === "Success" ? beat.success : beat, { lastHeartbeat: 1700000000000 })
      const none = yield* probeOf(json(200, '{"status":"expired","lastHeartbeat":"soon"}'))
      assert.deepStrictEqual(none._tag === "Success" ? none.success : none, { lastHeartbeat: undefined })
    })
  )

  it.live("what a hostile container may answer fails the probe, bounded in size and time", () =>
    Effect.gen(function* () {
      const details: Array<string> = []
      for (const answer of [
        json(500, '{"status":"alive"}'),
        json(200, "not json"),
        // Far more than any /healthz: the probe stops reading.
        (response: ServerResponse) => {
          response.writeHead(200)
          response.end(Buffer.alloc(8 * 1024 * 1024, 0x20))
        },
        // Never answers.
        () => undefined
      ]) {
        const result = yield* probeOf(answer)
        assert.strictEqual(result._tag, "Failure")
        if (result._tag === "Failure") details.push(`${result.failure.operation}: ${result.failure.detail}`)
      }
      assert.deepStrictEqual(details, [
        "health: /healthz answered 500",
        "health: /healthz answered no JSON",
        "health: /healthz answered more than 65536 bytes",
        "health: no answer"
      ])
    })
  )
})
