import { execFileSync } from "node:child_process"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ContainerRuntime } from "../src/index.ts"
import { bounded } from "./harness.ts"
import { exchange, runtimeLayer, withRelay } from "./relay-support.ts"

/**
 * The relay dials another Compose service by name, and only a name prbox gave
 * it at start that is a plain service name: never an address, a name with
 * dots or colons, the host's, or another project's service. Every name here
 * that the container resolves (its /etc/hosts) leads to a server listening in
 * it, so a relay that dialled what it was asked would answer with its banner.
 */

/** The container's address and its network's gateway (the Docker host), as the engine reports them. */
const addressesOf = (id: string): { readonly own: string; readonly gateway: string } => {
  const [own = "", gateway = ""] = execFileSync(
    "docker",
    ["inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{.Gateway}}{{end}}", id],
    { encoding: "utf8" }
  )
    .trim()
    .split(" ")
  return { own, gateway }
}

/** Names the container's /etc/hosts sends to its own loopback, where the banner server listens. */
const EXTRA_HOSTS = ["db:127.0.0.1", "other-db:127.0.0.1", "host.docker.internal:127.0.0.1", "evil.example:127.0.0.1"]

layer(runtimeLayer, { excludeTestServices: true })("the preview relay's other services", (it) => {
  it.effect("dials a service it was given by name, and refuses every other name before any dial", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      // A confused host could hand the relay hostile names with the good one: the relay takes only plain names.
      const hostile = ["host.docker.internal", "evil.example", "127.0.0.1", "2130706433", "0x7f000001", "localhost"]
      const { id, access } = yield* withRelay([["banner", "0.0.0.0", 3002]], {
        services: ["db", ...hostile, "::1"],
        extraHosts: EXTRA_HOSTS
      })
      const { own, gateway } = addressesOf(id)
      assert.match(own, /^\d+\.\d+\.\d+\.\d+$/)
      assert.match(gateway, /^\d+\.\d+\.\d+\.\d+$/)

      const reached = yield* exchange(yield* runtime.connect(id, 3002, access, "db"), "")
      assert.strictEqual(reached, "banner 3002\n")
      const closed = yield* Effect.flip(runtime.connect(id, 3999, access, "db"))
      assert.deepStrictEqual(
        [closed._tag, closed._tag === "PortClosed" && closed.service, closed.message],
        ["PortClosed", "db", `nothing listens on port 3999 of service db in sandbox ${id}`]
      )

      for (const name of [...hostile, "::1", "[::1]", own, gateway, "other-db", "DB", "db:3002", "db.", "0", "-db"]) {
        // A relay that dialled would answer with the banner: read as what it would show, the test fails with it.
        const refused = yield* runtime.connect(id, 3002, access, name).pipe(
          Effect.flatMap((stream) => Effect.orDie(exchange(stream, ""))),
          Effect.flatMap((banner) => Effect.die(new Error(`${name} was dialled: ${banner}`))),
          Effect.flip
        )
        assert.strictEqual(refused._tag, "RuntimeError", `${name}: ${refused.message}`)
        assert.include(refused.message, "service refused", name)
      }
      // The container's own ports are as before.
      assert.strictEqual(yield* exchange(yield* runtime.connect(id, 3002, access), ""), "banner 3002\n")
    }).pipe(bounded("relay services", 120))
  )

  it.effect("a relay given no services refuses every service", () =>
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const { id, access } = yield* withRelay([["banner", "0.0.0.0", 3002]], { extraHosts: EXTRA_HOSTS })
      const refused = yield* Effect.flip(runtime.connect(id, 3002, access, "db"))
      assert.include(refused.message, "service refused")
    }).pipe(bounded("relay without services", 120))
  )
})
