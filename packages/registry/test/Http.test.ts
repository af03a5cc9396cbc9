import { createServer, type IncomingHttpHeaders } from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { allowedUrl, send } from "../src/node/Http.ts"

// Which URLs a request or a redirect may reach (pure), and credentials
// across a redirect to another origin (two real HTTP servers on 127.0.0.1).

describe("allowedUrl", () => {
  const cases: ReadonlyArray<readonly [string, string | undefined, boolean]> = [
    ["https://registry.example/v2/", undefined, true],
    ["http://localhost:5000/v2/", undefined, true],
    ["http://127.0.0.1:5000/v2/", undefined, true],
    ["http://[::1]:5000/v2/", undefined, true],
    ["http://registry.example/v2/", undefined, false],
    ["http://127.0.0.2/v2/", undefined, false],
    ["ftp://registry.example/f", undefined, false],
    ["https://user:secret@registry.example/", undefined, false],
    // A redirect: to https anywhere; to this machine only from this machine.
    ["https://cdn.example/blob", "https://registry.example/v2/", true],
    ["http://127.0.0.1:9/secret", "https://registry.example/v2/", false],
    ["https://localhost/secret", "https://registry.example/v2/", false],
    ["http://127.0.0.1:9/blob", "http://localhost:5000/v2/", true],
    ["http://cdn.example/blob", "http://localhost:5000/v2/", false]
  ]
  for (const [url, from, allowed] of cases) {
    it(`${url} from ${from ?? "nowhere"}: ${allowed}`, () =>
      assert.strictEqual(
        allowedUrl(new URL(url), from === undefined ? undefined : new URL(from)) === undefined,
        allowed
      ))
  }
})

/** An HTTP server on 127.0.0.1 for the scope: each request's headers recorded, answered by `handle`. */
const server = (handle: (url: string) => { status: number; headers?: Record<string, string> }) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly base: string; readonly seen: Array<IncomingHttpHeaders>; readonly close: () => void }>(
      (resume) => {
        const seen: Array<IncomingHttpHeaders> = []
        const http = createServer((request, response) => {
          seen.push(request.headers)
          const answer = handle(request.url ?? "/")
          response.writeHead(answer.status, answer.headers).end("ok")
        })
        http.listen(0, "127.0.0.1", () => {
          const address = http.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({ base: `http://127.0.0.1:${port}`, seen, close: () => http.close() }))
        })
      }
    ),
    (running) => Effect.sync(() => running.close())
  )

describe("send", () => {
  it.live("Authorization goes to the origin it was meant for, not across a redirect to another", () =>
    Effect.gen(function* () {
      const storage = yield* server(() => ({ status: 200 }))
      const registry = yield* server((url) =>
        url === "/same"
          ? { status: 307, headers: { location: "/final" } }
          : url === "/final"
            ? { status: 200 }
            : { status: 307, headers: { location: `${storage.base}/blob` } }
      )
      const subject = { operation: "test", registry: "127.0.0.1", reference: "x" }
      const exchange = { headers: { authorization: "Bearer registry-token" }, maxBytes: 100, timeoutMs: 5_000 }
      const other = yield* send(subject, new URL(`${registry.base}/elsewhere`), exchange)
      assert.strictEqual(other.status, 200)
      assert.strictEqual(other.url.origin, storage.base)
      assert.strictEqual(registry.seen[0]?.authorization, "Bearer registry-token")
      assert.isUndefined(storage.seen[0]?.authorization, "the storage origin got the registry's token")

      const same = yield* send(subject, new URL(`${registry.base}/same`), exchange)
      assert.strictEqual(same.status, 200)
      assert.strictEqual(registry.seen.at(-1)?.authorization, "Bearer registry-token")
    }).pipe(Effect.scoped)
  )
})
