import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { NodeServices } from "@effect/platform-node"
import type { PullRequestLookup } from "@prbox/domain"
import { Effect, Layer } from "effect"
import { NodePullRequests, type PullRequestLocation, PullRequests } from "../src/index.ts"

/** One request the local API saw. */
export interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** What the local API answers: a status, headers and JSON body, or nothing ever ("hang"). */
export type Reply =
  | { readonly status: number; readonly headers?: Record<string, string>; readonly json?: unknown }
  | "hang"

export interface LocalApi {
  readonly base: string
  readonly seen: Array<Seen>
  /** Resolves when the next request arrives (a latch for tests that race it). */
  readonly arrived: () => Promise<Seen>
}

/**
 * A local stand-in for a hosted API (the real ones cannot be reached from
 * here), answering with the documented response shapes; closed with the scope.
 */
export const localApi = (answer: (seen: Seen) => Reply) =>
  Effect.acquireRelease(
    Effect.callback<LocalApi & { readonly close: () => void }>((resume) => {
      const seen: Array<Seen> = []
      let waiting: Array<(request: Seen) => void> = []
      const server = createServer((req, res: ServerResponse) => {
        let body = ""
        req.on("data", (chunk: Buffer) => {
          body += chunk.toString()
        })
        req.on("end", () => {
          const request = { method: req.method, url: req.url, headers: req.headers, body }
          seen.push(request)
          for (const wake of waiting) wake(request)
          waiting = []
          const reply = answer(request)
          if (reply === "hang") return
          res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers })
          res.end(reply.json === undefined ? "" : JSON.stringify(reply.json))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(
          Effect.succeed({
            base: `http://127.0.0.1:${port}`,
            seen,
            arrived: () => new Promise<Seen>((wake) => waiting.push(wake)),
            close: () => {
              server.closeAllConnections()
              server.close()
            }
          })
        )
      })
    }),
    (api) => Effect.sync(api.close)
  )

/** A temporary directory, removed when the test's scope closes. */
export const scratch = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(NodePath.join(tmpdir(), "prbox-hosting-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const credentialVariables = [
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "GH_ENTERPRISE_TOKEN",
  "GITHUB_ENTERPRISE_TOKEN",
  "GITLAB_TOKEN",
  "BITBUCKET_EMAIL",
  "BITBUCKET_API_TOKEN",
  "BITBUCKET_TOKEN"
]

/**
 * The test's environment: only the given credential variables, and git
 * reading its configuration from a temporary HOME (with `helper` as its
 * credential helper script when given), never the machine's.
 */
export const hostEnvironment = (variables: Record<string, string>, helper?: string) =>
  Effect.gen(function* () {
    const home = yield* scratch
    for (const name of credentialVariables) delete process.env[name]
    Object.assign(process.env, variables)
    process.env.HOME = home
    process.env.GIT_CONFIG_NOSYSTEM = "1"
    delete process.env.GIT_CONFIG_GLOBAL
    delete process.env.GIT_CONFIG_COUNT
    if (helper !== undefined) {
      const script = NodePath.join(home, "credential-helper")
      writeFileSync(script, `#!/bin/sh\n${helper}\n`)
      chmodSync(script, 0o755)
      writeFileSync(NodePath.join(home, ".gitconfig"), `[credential]\n\thelper = ${script}\n`)
    } else {
      writeFileSync(NodePath.join(home, ".gitconfig"), "")
    }
    return home
  })

/** The resolver with the Node services it runs on. */
export const resolverLayer = (options: NodePullRequests.Options) =>
  NodePullRequests.layer(options).pipe(Layer.provide(NodeServices.layer))

/** Asks the resolver in context. */
export const lookup = (at: PullRequestLocation): Effect.Effect<PullRequestLookup, never, PullRequests> =>
  Effect.flatMap(PullRequests, (service) => service.lookup(at))

/** The address of a port nothing listens on: a server is bound there, then closed. */
export const refusingBase = Effect.callback<string>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}`)))
  })
})
