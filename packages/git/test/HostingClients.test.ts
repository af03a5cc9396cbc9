import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { HostingClients } from "../src/index.ts"

describe("HostingClients", () => {
  it.effect("one client per host while the token stays; a new token replaces it", () =>
    Effect.gen(function* () {
      const clients = yield* HostingClients
      const place = { host: "github.com", origin: "http://127.0.0.1:1" }
      const first = yield* clients.github(place, "tok-a")
      assert.strictEqual(yield* clients.github(place, "tok-a"), first)
      assert.notStrictEqual(yield* clients.github({ host: "git.example.com" }, "tok-a"), first)
      const replaced = yield* clients.github(place, "tok-b")
      assert.notStrictEqual(replaced, first)
      assert.strictEqual(yield* clients.github(place, "tok-b"), replaced)
      const gitlab = yield* clients.gitlab({ host: "gitlab.example.com" }, "tok-a", 5_000)
      assert.strictEqual(yield* clients.gitlab({ host: "gitlab.example.com" }, "tok-a", 5_000), gitlab)
    }).pipe(Effect.provide(HostingClients.layer))
  )
})
