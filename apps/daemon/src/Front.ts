import { unlinkSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import {
  API_HEADER,
  type ApiErrorTag,
  ErrorCodes,
  errorBody,
  isProbePath,
  isStreamPath,
  SERVED_API_VERSIONS
} from "@prbox/protocol"
import { Cause, Effect, SchemaIssue, type Scope } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpServerError, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { startupFailure } from "./Files.ts"
import type { Limits } from "./Limits.ts"
import type { RequestTimings } from "./RequestTimings.ts"
import { listenPrivately } from "./SocketFile.ts"

/**
 * Answers for the failures effect's HTTP layer turns into bare status codes:
 * a request that does not decode (400, with what is wrong), a route that does
 * not exist (404), and a defect (500). Every answer is an API error body.
 */
export const renderFailures = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.catchCause(app, (cause) => {
    const json = (tag: ApiErrorTag, message: string) =>
      Effect.succeed(
        HttpServerResponse.text(errorBody(tag, message), {
          status: ErrorCodes[tag].httpStatus,
          contentType: "application/json"
        })
      )
    for (const reason of cause.reasons) {
      if (reason._tag === "Fail" && HttpServerError.isHttpServerError(reason.error)) {
        const inner = reason.error.reason
        if (inner._tag === "RouteNotFound") {
          return json("NotFound", `no such endpoint: ${inner.request.method} ${inner.request.url}`)
        }
      }
      if (reason._tag === "Die" && HttpApiError.HttpApiSchemaError.is(reason.defect)) {
        const error = reason.defect
        if (error.kind === "Body" || error.kind === "ResponseHeaders") break
        const issue = SchemaIssue.makeFormatterDefault()(error.cause.issue)
        const where = { Params: "path", Query: "query", Payload: "body", Headers: "headers" }[error.kind]
        return json("BadRequest", `invalid request ${where}: ${issue}`)
      }
      if (reason._tag === "Die" && HttpApiError.HttpApiPayloadTooLarge.is(reason.defect)) {
        return json("PayloadTooLarge", "request body too large")
      }
    }
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
    return Effect.logError("request failed", cause).pipe(
      Effect.andThen(json("Internal", "internal error in prboxd; see its log"))
    )
  })

const flushHeadersOnWrite = (res: ServerResponse) => {
  const writeHead = res.writeHead
  const patched = function (this: ServerResponse, ...args: Array<unknown>) {
    const result = (writeHead as (...a: Array<unknown>) => ServerResponse).apply(this, args)
    this.flushHeaders()
    return result
  }
  res.writeHead = patched as unknown as ServerResponse["writeHead"]
}

export interface Front {
  readonly inFlight: () => { readonly requests: number; readonly streams: number }
}

/**
 * The socket's front: Node's http server with the bounds effect's server does
 * not express, in front of effect's request handler.
 * - body size: a `Content-Length` over the limit is answered 413 before the
 *   body is read; a chunked body (no length) is refused with 411;
 * - read time: Node's `requestTimeout`/`headersTimeout` answer 408, checked
 *   every `connectionsCheckingInterval`;
 * - concurrency: ordinary requests and event streams are counted separately
 *   (streams are long-lived and must not starve requests); one more than the
 *   cap is answered 503 with `Retry-After`. `GET /version` and
 *   `GET /v1/health` are never refused, so a saturated daemon still answers
 *   whether it is alive.
 * Every answer names the API generations the daemon serves (API_HEADER).
 * The server listens on the socket with a 0600 mode; closing the scope stops
 * accepting, cuts open connections (streams) and removes the socket file.
 */
export const serve = <E>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest | Scope.Scope>,
  options: {
    readonly socketPath: string
    readonly limits: Limits
    readonly counters: { requests: number; streams: number }
    /** Set only for the api bench (see RequestTimings.ts). */
    readonly timings?: RequestTimings
    /** HTTP upgrades (SSH): without it an upgrade request is refused. */
    readonly upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void
  }
) =>
  Effect.gen(function* () {
    const { limits, counters } = options
    const requestScope = yield* Effect.scope
    const handler = yield* NodeHttpServer.makeHandler(renderFailures(app), { scope: requestScope })
    const server = createServer({
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.requestTimeoutMs / 4))),
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16 * 1024
    })

    const refuse = (res: ServerResponse, status: number, tag: ApiErrorTag, message: string, retry = false) => {
      const body = errorBody(tag, message)
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        connection: "close",
        ...(retry ? { "retry-after": String(limits.retryAfterSeconds) } : {})
      })
      res.end(body)
    }

    const apiHeader = SERVED_API_VERSIONS.join(",")
    const front = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
      options.timings?.observe(req, res)
      res.setHeader(API_HEADER, apiHeader)
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      const length = req.headers["content-length"]
      if (req.headers["transfer-encoding"] !== undefined) {
        return refuse(res, 411, "BadRequest", "send the request body with a Content-Length")
      }
      if (length !== undefined && Number(length) > limits.maxBodyBytes) {
        return refuse(
          res,
          ErrorCodes.PayloadTooLarge.httpStatus,
          "PayloadTooLarge",
          `request body of ${length} bytes is over the limit of ${limits.maxBodyBytes} bytes`
        )
      }
      if (!isProbePath(path)) {
        const kind = isStreamPath(path) ? "streams" : "requests"
        const cap = kind === "streams" ? limits.maxStreams : limits.maxRequests
        if (counters[kind] >= cap) {
          return refuse(
            res,
            ErrorCodes.Busy.httpStatus,
            "Busy",
            `prboxd is busy (${counters[kind]} ${kind === "streams" ? "event streams" : "requests"} in flight); retry in ${limits.retryAfterSeconds} s`,
            true
          )
        }
        counters[kind]++
        res.once("close", () => {
          counters[kind]--
        })
        // A stream's headers go out at once: a client learns it is subscribed before the first event.
        if (kind === "streams") flushHeadersOnWrite(res)
      }
      if (expectsContinue) res.writeContinue()
      handler(req, res)
    }

    server.on("request", (req, res) => front(req, res, false))
    server.on("checkContinue", (req, res) => front(req, res, true))
    // Upgraded connections (SSH sessions) are no longer the HTTP server's: cut at shutdown as streams are.
    const upgraded = new Set<Duplex>()
    server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (options.upgrade === undefined) return socket.destroy()
      upgraded.add(socket)
      socket.once("close", () => upgraded.delete(socket))
      options.upgrade(req, socket, head)
    })
    server.on("clientError", (error: NodeJS.ErrnoException, socket) => {
      // Node's own answers for a request it could not read: 408 for a deadline, 400 otherwise.
      const response = (socket as { _httpMessage?: ServerResponse })._httpMessage
      if (socket.writable && (response === undefined || !response.headersSent)) {
        const timeout = error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        const tooLarge = error.code === "HPE_HEADER_OVERFLOW"
        const status = timeout
          ? "408 Request Timeout"
          : tooLarge
            ? "431 Request Header Fields Too Large"
            : "400 Bad Request"
        const body = timeout
          ? errorBody("BadRequest", "the request was not received in time")
          : errorBody("BadRequest", tooLarge ? "request headers too large" : "malformed HTTP request")
        socket.end(
          `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
        )
      }
      socket.destroy()
    })

    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => listenPrivately(server, options.socketPath), catch: startupFailure }),
      () =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          // Streams never end by themselves; idle keep-alive connections neither.
          server.closeAllConnections()
          for (const socket of upgraded) socket.destroy()
          try {
            unlinkSync(options.socketPath)
          } catch {
            // Node removed it on close.
          }
        })
    )
    return { inFlight: () => ({ ...counters }) } satisfies Front
  })
