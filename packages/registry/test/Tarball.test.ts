import { createHash, randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { NodeOciRegistry, OciRegistry } from "../src/index.ts"
import { failureOf } from "./fixtures.ts"

// A real HTTP server on 127.0.0.1 serves the tarballs (features given as a `…tgz` URL).

const tarball = randomBytes(50_000)
const digest = `sha256:${createHash("sha256").update(tarball).digest("hex")}`

type Route = (response: ServerResponse, headers: IncomingHttpHeaders) => void

/** An HTTP server on a free port of 127.0.0.1 for the scope; each request's headers are recorded. */
const serve = (routes: Readonly<Record<string, Route>>) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly base: string; readonly seen: Array<IncomingHttpHeaders>; close: () => void }>(
      (resume) => {
        const seen: Array<IncomingHttpHeaders> = []
        const server = createServer((request, response) => {
          seen.push(request.headers)
          const route = routes[new URL(request.url ?? "/", "http://127.0.0.1").pathname]
          if (route === undefined) response.writeHead(404).end()
          else route(response, request.headers)
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({ base: `http://127.0.0.1:${port}`, seen, close: () => server.close() }))
        })
      }
    ),
    (server) => Effect.sync(() => server.close())
  )

const fetchTarball = (url: string, options: NodeOciRegistry.Options = {}) =>
  Effect.flatMap(OciRegistry, (oci) => oci.fetchTarball(url)).pipe(Effect.provide(NodeOciRegistry.layer(options)))

const routes: Readonly<Record<string, Route>> = {
  "/feature.tgz": (response) => response.writeHead(200, { "content-type": "application/gzip" }).end(tarball),
  "/chunked.tgz": (response) => {
    response.writeHead(200)
    response.write(tarball.subarray(0, 25_000))
    response.end(tarball.subarray(25_000))
  },
  "/moved.tgz": (response) => response.writeHead(302, { location: "/feature.tgz" }).end(),
  "/to-plain-http.tgz": (response) =>
    response.writeHead(302, { location: "http://registry.example/feature.tgz" }).end(),
  "/loop.tgz": (response) => response.writeHead(302, { location: "/loop.tgz" }).end(),
  "/broken.tgz": (response) => response.writeHead(500).end()
}

describe("fetchTarball", () => {
  it.live("a tarball over loopback HTTP: its bytes and their digest, no credentials sent", () =>
    Effect.gen(function* () {
      const server = yield* serve(routes)
      for (const path of ["/feature.tgz", "/chunked.tgz", "/moved.tgz"]) {
        const fetched = yield* fetchTarball(`${server.base}${path}?signature=secret-sig`)
        assert.deepStrictEqual(Buffer.from(fetched.bytes), tarball, path)
        assert.strictEqual(fetched.digest, digest)
      }
      assert.isTrue(server.seen.every((headers) => headers.authorization === undefined))
    }).pipe(Effect.scoped)
  )

  it.live("plain HTTP anywhere but this machine is refused, before any request and after a redirect", () =>
    Effect.gen(function* () {
      const server = yield* serve(routes)
      for (const url of ["http://registry.example/feature.tgz", "http://127.0.0.2:1/feature.tgz"]) {
        const error = yield* failureOf(fetchTarball(url))
        assert.strictEqual(error.reason, "refused", url)
        assert.include(error.detail, "https only")
      }
      const redirected = yield* failureOf(fetchTarball(`${server.base}/to-plain-http.tgz`))
      assert.strictEqual(redirected.reason, "refused")
      assert.include(redirected.detail, "registry.example")
      for (const url of ["ftp://registry.example/f.tgz", "not a url", "https://user:pw@registry.example/f.tgz"]) {
        const error = yield* failureOf(fetchTarball(url))
        assert.strictEqual(error.reason, "refused", url)
        assert.notInclude(error.message, "pw@")
      }
    }).pipe(Effect.scoped)
  )

  it.live("not found, a server error, endless redirects, too large: each its own error, the query never shown", () =>
    Effect.gen(function* () {
      const server = yield* serve(routes)
      const missing = yield* failureOf(fetchTarball(`${server.base}/absent.tgz?token=secret-query`))
      assert.strictEqual(missing.reason, "not-found")
      assert.notInclude(missing.message, "secret-query")
      assert.strictEqual((yield* failureOf(fetchTarball(`${server.base}/broken.tgz`))).reason, "protocol")
      assert.strictEqual((yield* failureOf(fetchTarball(`${server.base}/loop.tgz`))).reason, "protocol")
      for (const path of ["/feature.tgz", "/chunked.tgz"]) {
        const error = yield* failureOf(fetchTarball(`${server.base}${path}`, { maxLayerBytes: 10_000 }))
        assert.strictEqual(error.reason, "too-large", path)
      }
    }).pipe(Effect.scoped)
  )

  it.live("a server that never answers is unreachable at the deadline", () =>
    Effect.gen(function* () {
      const server = yield* serve({ "/hang.tgz": () => {} })
      const error = yield* failureOf(fetchTarball(`${server.base}/hang.tgz`, { timeoutMs: 300 }))
      assert.strictEqual(error.reason, "unreachable")
      assert.include(error.detail, "within")
    }).pipe(Effect.scoped)
  )
})
