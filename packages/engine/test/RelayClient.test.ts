import { spawn } from "node:child_process"
import { createServer, type Socket } from "node:net"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { freePort } from "../../docker/test/fixtures.ts"
import { handshake, RELAY_SOURCE_FILE, readToEnd } from "../src/node/docker/RelayClient.ts"

/** A stand-in relay on 127.0.0.1 that answers every request with `answer` in one write. */
const standIn = (answer: string) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
      const sockets = new Set<Socket>()
      const server = createServer((socket) => {
        sockets.add(socket)
        socket.once("data", () => socket.end(answer))
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const close = () => {
          for (const socket of sockets) socket.destroy()
          server.close()
        }
        resume(Effect.succeed({ port: typeof address === "object" && address !== null ? address.port : 0, close }))
      })
    }),
    ({ close }) => Effect.sync(close)
  )

describe("the relay's host side", () => {
  it.effect("keeps the app's bytes that arrive in the same packet as `ok`", () =>
    Effect.gen(function* () {
      const relay = yield* standIn("ok\nearly bytes from the app")
      const answer = yield* handshake(relay.port, "PRBOX-RELAY/1 token connect 3000\n")
      assert.strictEqual(answer._tag, "Ok")
      if (answer._tag !== "Ok") return
      assert.strictEqual(yield* readToEnd(answer.stream), "early bytes from the app")
    })
  )

  it.effect("tells the relay's answers apart, and a connection closed without one", () =>
    Effect.gen(function* () {
      for (const [line, tag] of [
        ["closed\n", "Closed"],
        ["denied\n", "Denied"],
        ["error ETIMEDOUT\n", "Failed"],
        ["", "NoAnswer"]
      ] as const) {
        const relay = yield* standIn(line)
        const answer = yield* handshake(relay.port, "PRBOX-RELAY/1 token connect 3000\n")
        assert.strictEqual(answer._tag, tag, line)
        if (answer._tag === "Failed") assert.strictEqual(answer.reason, "ETIMEDOUT")
      }
    })
  )
})

/** The relay itself, run by this host's Node on a free port until the scope closes. */
const hostRelay = (token: string) =>
  Effect.gen(function* () {
    const port = yield* freePort
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(process.execPath, [fileURLToPath(RELAY_SOURCE_FILE)], {
          env: { PRBOX_RELAY_TOKEN: token, PRBOX_RELAY_PORT: String(port) },
          stdio: "ignore"
        })
      ),
      (child) => Effect.sync(() => void child.kill())
    )
    yield* handshake(port, "PRBOX-RELAY/1 x ports\n").pipe(
      Effect.filterOrFail((answer) => answer._tag !== "NoAnswer"),
      Effect.retry({ schedule: Schedule.spaced(20), times: 250 })
    )
    return port
  })

describe("the relay's checks of the request line", () => {
  // Real time: the relay needs a moment to listen.
  it.live("refuses a long line, another protocol, a wrong token and a bad request, each with its answer", () =>
    Effect.gen(function* () {
      const port = yield* hostRelay("the-token")
      for (const [request, expected] of [
        [`PRBOX-RELAY/1 the-token connect ${"9".repeat(300)}\n`, { _tag: "Failed", reason: "line too long" }],
        ["PRBOX-RELAY/2 the-token ports\n", { _tag: "Failed", reason: "unsupported protocol" }],
        ["PRBOX-RELAY/1 the-tokem ports\n", { _tag: "Denied" }],
        ["PRBOX-RELAY/1 the-token connect 70000\n", { _tag: "Failed", reason: "bad request" }],
        ["PRBOX-RELAY/1 the-token listen 3000\n", { _tag: "Failed", reason: "bad request" }]
      ] as const) {
        assert.deepStrictEqual(yield* handshake(port, request), expected, request)
      }
      const ports = yield* handshake(port, "PRBOX-RELAY/1 the-token ports\n")
      assert.strictEqual(ports._tag, "Ok")
      if (ports._tag === "Ok") assert.include(yield* readToEnd(ports.stream), "local_address")
    }).pipe(Effect.orDie)
  )

  it.live("denies everything when it was started without a token", () =>
    Effect.gen(function* () {
      const port = yield* hostRelay("")
      assert.deepStrictEqual(yield* handshake(port, "PRBOX-RELAY/1  ports\n"), { _tag: "Denied" })
    }).pipe(Effect.orDie)
  )
})
