import { randomBytes } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { PREVIEW_RELAY_PORT } from "../src/CodeServerSpec.ts"
import { ContainerRuntime, type RelayAccess } from "../src/index.ts"
import { bounded, healthzTag } from "./harness.ts"
import {
  eventually,
  exchange,
  httpGet,
  listeningByExec,
  runtimeLayer,
  sandbox,
  sh,
  USER,
  withRelay
} from "./relay-support.ts"

// The relay's processes: their argv holds the relay's source (the pattern is split so this shell's own does not match).
const relayPids = (id: string) =>
  Effect.map(
    sh(
      id,
      'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline 2>/dev/null | grep -q "PRBOX""-RELAY/1"; then basename $p; fi; done'
    ),
    (outcome) => (outcome.stdout + outcome.stderr).split("\n").filter((line) => line.length > 0)
  )

layer(runtimeLayer, { excludeTestServices: true })("the preview relay in a real container", (it) => {
  it.effect(
    "is started on first use and reaches apps on 0.0.0.0 and on 127.0.0.1 only, losing no byte after `ok`",
    () =>
      Effect.gen(function* () {
        const runtime = yield* ContainerRuntime
        const { id, access } = yield* withRelay([
          ["http", "0.0.0.0", 3000],
          ["http", "127.0.0.1", 3001],
          ["banner", "127.0.0.1", 3002]
        ])
        assert.deepStrictEqual(yield* relayPids(id), [])

        const wide = yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/wide?x=1"))
        assert.match(wide, /^HTTP\/1\.1 200 OK\r\n/)
        assert.isTrue(wide.endsWith("\r\n\r\n3000 /wide?x=1"), wide)
        assert.lengthOf(yield* relayPids(id), 1)

        const loopback = yield* exchange(yield* runtime.connect(id, 3001, access), httpGet("/only-here"))
        assert.isTrue(loopback.endsWith("\r\n\r\n3001 /only-here"), loopback)

        // The app speaks first: its bytes may share a packet with the relay's `ok`.
        const banner = yield* exchange(yield* runtime.connect(id, 3002, access), "")
        assert.strictEqual(banner, "banner 3002\n")

        const closed = yield* Effect.flip(runtime.connect(id, 3999, access))
        assert.deepStrictEqual([closed._tag, closed._tag === "PortClosed" && closed.port], ["PortClosed", 3999])
      }).pipe(bounded("relay round trips", 120))
  )

  it.effect("refuses a wrong token without echoing it", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([["http", "0.0.0.0", 3000]])
      // The relay runs with the right token: a request with another one is denied.
      yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/"))
      const forged = `forged-${randomBytes(8).toString("hex")}`
      const denied = yield* Effect.flip(runtime.connect(id, 3000, { ...access, token: forged }))
      assert.strictEqual(denied._tag, "RuntimeError")
      assert.notInclude(JSON.stringify(denied), forged)
      assert.notInclude(denied.message, access.token)
      const listing = yield* Effect.flip(runtime.listeningPorts(id, { ...access, token: forged }))
      assert.strictEqual(listing._tag, "RuntimeError")
    }).pipe(bounded("wrong token", 120))
  )

  it.effect("lists the ports listening inside, and a stopped server goes from the list", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([
        ["http", "0.0.0.0", 3000],
        ["http", "127.0.0.1", 3001]
      ])
      const before = yield* runtime.listeningPorts(id, access)
      assert.includeMembers([...before], [3000, 3001, PREVIEW_RELAY_PORT])
      assert.deepStrictEqual(
        before,
        [...before].sort((a, b) => a - b)
      )

      yield* sh(id, "kill $(cat /tmp/server-3001.pid)")
      const after = yield* eventually(runtime.listeningPorts(id, access), (ports) => !ports.includes(3001))
      assert.include([...after], 3000)
    }).pipe(bounded("listening ports", 120))
  )

  it.effect("starts the relay again after it is killed, and after the container restarts on a new port", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([["http", "127.0.0.1", 3000]])
      yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/first"))
      const [first] = yield* relayPids(id)
      assert.isDefined(first)

      yield* sh(id, `kill ${first}`)
      yield* eventually(listeningByExec(id), (ports) => !ports.includes(PREVIEW_RELAY_PORT))
      const again = yield* exchange(yield* runtime.connect(id, 3000, access), httpGet("/again"))
      assert.isTrue(again.endsWith("3000 /again"), again)
      const restarted = yield* relayPids(id)
      assert.lengthOf(restarted, 1)
      assert.notStrictEqual(restarted[0], first)

      // A restart publishes the relay elsewhere; the runtime finds it and starts the relay there.
      yield* runtime.stop(id)
      yield* runtime.start(id)
      const closed = yield* Effect.flip(runtime.connect(id, 3000, access))
      assert.strictEqual(closed._tag, "PortClosed")
    }).pipe(bounded("relay restarts", 120))
  )

  it.effect("says a container made without a relay port has no previews, and how to get them", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const id = yield* sandbox({ image: healthzTag, entrypoint: ["sh", "-c", "exec sleep 3600"] })
      const access: RelayAccess = { token: "unused", node: ["node"], user: USER }
      const failure = yield* Effect.flip(runtime.connect(id, 3000, access))
      assert.strictEqual(failure._tag, "PreviewUnavailable")
      assert.include(failure.message, "made before previews: `prbox rebuild` gives it them")
      const listing = yield* Effect.flip(runtime.listeningPorts(id, access))
      assert.strictEqual(listing._tag, "PreviewUnavailable")
    })
  )
})
