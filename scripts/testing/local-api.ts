import { createServer, type IncomingMessage } from "node:http"
import { Effect } from "effect"

/** One request the local API saw. */
export interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** What the local API answers: a status, headers and a JSON or text body, or nothing ever ("hang"). */
export type Reply =
  | {
      readonly status: number
      readonly headers?: Record<string, string>
      readonly json?: unknown
      readonly text?: string
    }
  | "hang"

export interface LocalApi {
  readonly base: string
  readonly seen: Array<Seen>
  /** Resolves when the next request arrives (a latch for tests that race it). */
  readonly arrived: () => Promise<Seen>
}

/**
 * A local stand-in for a hosted API that cannot be reached from here (GitHub,
 * GitLab, Bitbucket, AWS), on 127.0.0.1, answering what `answer` says; closed
 * with the scope, connections left hanging included.
 */
export const localApi = (answer: (seen: Seen) => Reply) =>
  Effect.acquireRelease(
    Effect.callback<LocalApi & { readonly close: () => void }>((resume) => {
      const seen: Array<Seen> = []
      let waiting: Array<(request: Seen) => void> = []
      const server = createServer((req, res) => {
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
          res.end(reply.text ?? (reply.json === undefined ? "" : JSON.stringify(reply.json)))
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

/** The address of a port nothing listens on: a server is bound there, then closed. */
export const refusingBase = Effect.callback<string>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}`)))
  })
})
