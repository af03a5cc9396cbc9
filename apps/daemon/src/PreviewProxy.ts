import { createServer, type Server, type Socket } from "node:net"
import {
  bearerToken,
  cookieValue,
  originAllowed,
  PREVIEW_COOKIE,
  parsePreviewPath,
  previewTarget,
  type SandboxId
} from "@prbox/domain"
import { type PortStream, Previews, SandboxService } from "@prbox/engine"
import { type Cause, Effect, Exit, Stream } from "effect"
import { startupFailure } from "./Files.ts"
import type { Limits } from "./Limits.ts"
import { LOGIN_PATH, loggedIn, loginPage, redirectToLogin, refuse, safeNext, wantsHtml } from "./PreviewAnswers.ts"
import { header, headerCount, type RequestHead, readBody, readHead, rewriteHead } from "./PreviewHead.ts"

const MAX_HEAD_BYTES = 16 * 1024
const MAX_LOGIN_BYTES = 4 * 1024

/** Where a request goes: a sandbox's port, and the target the app sees (the path form's is rewritten). */
interface Route {
  readonly sandboxId: SandboxId
  readonly port: number
  /** Another Compose service's port (the app's own when absent). */
  readonly service: string | undefined
  readonly form: "host" | "path"
  readonly appTarget: string
}

/**
 * prboxd's preview front: one loopback TCP port. The first request of each
 * connection is read and decided here (Host and Origin, the sandbox, its
 * access); then the connection is joined, byte for byte, to the port inside
 * the sandbox: keep-alive requests, bodies and WebSocket frames stream through
 * without being buffered, and can only ever reach that sandbox's port.
 */
export const servePreviews = (limits: Limits) =>
  Effect.gen(function* () {
    const previews = yield* Previews
    const sandboxes = yield* SandboxService
    const previewPort = previews.previewPort
    const bySandbox = new Map<SandboxId, Set<Socket>>()
    const connections = new Set<Socket>()

    // Engine calls run with the daemon's services (its log among them).
    const services = yield* Effect.context<never>()
    const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromiseExitWith(services)(effect)
    /** A failure that is not the engine's answer (a defect, the store) is logged, never only shown. */
    const unexpected = (operation: string, cause: Cause.Cause<unknown>) =>
      void run(Effect.logError(`preview ${operation} failed`, cause))

    const track = (id: SandboxId, socket: Socket): boolean => {
      const set = bySandbox.get(id) ?? new Set<Socket>()
      if (set.size >= limits.maxPreviewConnectionsPerSandbox) return false
      set.add(socket)
      bySandbox.set(id, set)
      socket.once("close", () => {
        set.delete(socket)
        if (set.size === 0) bySandbox.delete(id)
      })
      return true
    }

    const route = (head: RequestHead): Route | "foreign" | "unknown" => {
      const target = previewTarget(header(head, "host"), previewPort)
      if (target._tag === "Foreign") return "foreign"
      if (target._tag === "HostForm") {
        const { sandboxId, port, service } = target
        return { sandboxId, port, service, form: "host", appTarget: head.target }
      }
      const path = parsePreviewPath(head.target)
      return path === undefined
        ? "unknown"
        : { sandboxId: path.sandboxId, port: path.port, service: path.service, form: "path", appTarget: path.rest }
    }

    const authorized = async (head: RequestHead, to: Route): Promise<boolean> => {
      const isPublic = await run(previews.isPublic(to.sandboxId, to.port, to.service))
      if (Exit.isSuccess(isPublic) && isPublic.value) return true
      // Only the host form takes the cookie: the path form's origin is shared by every sandbox.
      const credential =
        bearerToken(header(head, "authorization")) ??
        (to.form === "host" ? cookieValue(header(head, "cookie"), PREVIEW_COOKIE) : undefined)
      if (credential === undefined) return false
      const valid = await run(previews.verifyToken(to.sandboxId, credential))
      return Exit.isSuccess(valid) && valid.value
    }

    const login = async (socket: Socket, head: RequestHead, rest: Buffer, to: Route) => {
      const query = new URLSearchParams(head.target.split("?")[1] ?? "")
      if (head.method !== "POST") {
        return loginPage(socket, head, { sandboxId: to.sandboxId, next: query.get("next") ?? "/", wrong: false })
      }
      const length = Number(header(head, "content-length") ?? "NaN")
      if (!Number.isInteger(length) || length < 0 || length > MAX_LOGIN_BYTES) {
        return refuse(socket, head, "BadRequest", "a login is a small form with a Content-Length")
      }
      const body = await readBody(socket, rest, length, limits.headersTimeoutMs)
      if (body === undefined) return socket.destroy()
      const form = new URLSearchParams(body.toString("utf8"))
      const next = safeNext(form.get("next"))
      const valid = await run(previews.verifyPassword(to.sandboxId, form.get("password") ?? ""))
      if (!Exit.isSuccess(valid) || !valid.value) {
        return loginPage(socket, head, { sandboxId: to.sandboxId, next, wrong: true })
      }
      const token = await run(previews.token(to.sandboxId))
      if (!Exit.isSuccess(token)) return refuse(socket, head, "Unavailable", "this sandbox cannot be logged in to")
      return loggedIn(socket, head, to.sandboxId, token.value, next)
    }

    /** Joins the client to the app: idle connections end, either side's end or error ends both. */
    const join = (socket: Socket, upstream: PortStream, first: Buffer, rest: Buffer, id: SandboxId) => {
      const app = upstream.socket
      const end = () => {
        socket.destroy()
        app.destroy()
      }
      // Traffic is activity; the engine throttles the touch, this keeps it off the per-chunk path.
      let reported = 0
      const activity = () => {
        const now = Date.now()
        if (now - reported < 10_000) return
        reported = now
        void run(previews.activity(id))
      }
      for (const side of [socket, app]) {
        side.on("error", end)
        side.on("close", end)
      }
      socket.on("data", activity)
      // Either direction moving keeps the connection: the client's socket sees both.
      socket.setTimeout(limits.previewIdleTimeoutMs, end)
      app.write(first)
      if (rest.length > 0) app.write(rest)
      socket.pipe(app)
      upstream.pipeTo(socket)
    }

    const handle = async (socket: Socket) => {
      socket.on("error", () => socket.destroy())
      const read = await readHead(socket, MAX_HEAD_BYTES, limits.headersTimeoutMs)
      if (read._tag === "Closed") return socket.destroy()
      if (read._tag === "TooLarge") return refuse(socket, undefined, "HeadersTooLarge", "request headers too large")
      if (read._tag === "Invalid") return refuse(socket, undefined, "BadRequest", read.reason)
      const { head, rest } = read
      if (headerCount(head, "host") !== 1) return refuse(socket, head, "BadRequest", "one Host header is required")
      const to = route(head)
      if (to === "foreign") {
        return refuse(
          socket,
          head,
          "Forbidden",
          `this is prbox's preview server; ${header(head, "host")} is not a preview host`
        )
      }
      if (to === "unknown") {
        return refuse(
          socket,
          head,
          "NotFound",
          `a preview is http://<port>.<sandbox id>.localhost:${previewPort}/ or /s/<sandbox id>/<port>/ ` +
            `(another Compose service's: <port>.<service>.<sandbox id>.localhost, /s/<sandbox id>/<service>:<port>/)`
        )
      }
      if (!originAllowed(header(head, "origin"), previewTarget(header(head, "host"), previewPort), previewPort)) {
        return refuse(socket, head, "Forbidden", "requests from another site are refused")
      }
      const sandbox = await run(sandboxes.get(to.sandboxId))
      if (!Exit.isSuccess(sandbox)) {
        const failure = sandbox.cause.reasons.find((reason) => reason._tag === "Fail")?.error
        if (failure?._tag === "SandboxNotFound") return refuse(socket, head, "NotFound", `no sandbox ${to.sandboxId}`)
        unexpected("lookup", sandbox.cause)
        return refuse(socket, head, "BadGateway", "prboxd could not read its state; see its log")
      }
      if (to.form === "host" && head.target.split("?")[0] === LOGIN_PATH) return login(socket, head, rest, to)
      if (sandbox.value.status !== "running") {
        return refuse(
          socket,
          head,
          "Unavailable",
          `sandbox ${to.sandboxId} is ${sandbox.value.status}; start it with \`prbox restart ${to.sandboxId}\``,
          { "Retry-After": "5" }
        )
      }
      if (!(await authorized(head, to))) {
        if (to.form === "host" && wantsHtml(head)) return redirectToLogin(socket, head)
        return refuse(
          socket,
          head,
          "Unauthorized",
          `log in, or send Authorization: Bearer $(prbox preview-token ${to.sandboxId})`,
          { "WWW-Authenticate": "Bearer" }
        )
      }
      if (!track(to.sandboxId, socket)) {
        return refuse(socket, head, "Busy", `too many preview connections to sandbox ${to.sandboxId}`, {
          "Retry-After": "1"
        })
      }
      const upstream = await run(previews.connect(to.sandboxId, to.port, to.service))
      if (!Exit.isSuccess(upstream)) {
        const failure = upstream.cause.reasons.find((reason) => reason._tag === "Fail")?.error
        const message = failure?.message ?? "the preview failed; see prboxd's log"
        switch (failure?._tag) {
          case "PortClosed":
          case "UnknownService":
          case "SandboxNotFound":
            return refuse(socket, head, "NotFound", message)
          case "SandboxConflict":
          case "PreviewUnavailable":
            return refuse(socket, head, "Unavailable", message, { "Retry-After": "5" })
          case "RuntimeError":
            return refuse(socket, head, "BadGateway", message)
          default:
            unexpected("connect", upstream.cause)
            return refuse(socket, head, "BadGateway", message)
        }
      }
      if (socket.destroyed) return upstream.value.socket.destroy()
      // The path form's app sees its own path; one request per connection, as the next one's path is not
      // rewritten (an upgrade keeps its Connection header: what follows it is no longer HTTP).
      const upgrade = header(head, "upgrade") !== undefined
      const first =
        to.form === "host"
          ? head.raw
          : rewriteHead(head, { target: to.appTarget, set: upgrade ? {} : { Connection: "close" } })
      join(socket, upstream.value, first, rest, to.sandboxId)
    }

    const server: Server = createServer({ noDelay: true }, (socket) => {
      if (connections.size >= limits.maxPreviewConnections) {
        return refuse(socket, undefined, "Busy", "prboxd has too many preview connections; retry", {
          "Retry-After": "1"
        })
      }
      connections.add(socket)
      socket.once("close", () => connections.delete(socket))
      handle(socket).catch(() => socket.destroy())
    })

    // A sandbox that leaves `running` loses its preview connections at once.
    yield* sandboxes.events.pipe(
      Stream.runForEach((event) =>
        Effect.sync(() => {
          if (event._tag !== "StatusChanged" || event.status === "running") return
          for (const socket of bySandbox.get(event.sandboxId) ?? []) socket.destroy()
        })
      ),
      Effect.forkScoped
    )

    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          new Promise<void>((resolve, reject) => {
            server.once("error", reject)
            server.listen(previewPort, "127.0.0.1", () => {
              server.off("error", reject)
              resolve()
            })
          }),
        catch: (error) =>
          startupFailure(new Error(`cannot serve previews on 127.0.0.1:${previewPort}: ${String(error)}`))
      }),
      () =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          for (const socket of connections) socket.destroy()
        })
    )
  })
