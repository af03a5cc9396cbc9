import type { IncomingMessage } from "node:http"
import type { Duplex } from "node:stream"
import { SandboxId } from "@prbox/domain"
import { SSH_SOCKET_NAME, Ssh } from "@prbox/engine"
import { type ApiErrorTag, ErrorCodes, errorBody } from "@prbox/protocol"
import { Effect, Exit, Schema, Scope } from "effect"

/**
 * `POST /v1/sandboxes/<id>/ssh[?socket=<name>]` with `Upgrade: prbox-ssh`.
 * The 101's `Prbox-Ssh-Transport` says where the SSH bytes go: `socket`,
 * the client's own socket `<name>` (in the sandbox's folder of sockets),
 * which the server dialled, and this connection only holds the server
 * until either ends; `piped`, this connection.
 */
export const SSH_PATH = /^\/v1\/sandboxes\/([^/]+)\/ssh$/
export const SSH_UPGRADE = "prbox-ssh"

const isSandboxId = Schema.is(SandboxId)

const answer = (socket: Duplex, tag: ApiErrorTag, message: string) => {
  const body = errorBody(tag, message)
  const status = ErrorCodes[tag].httpStatus
  socket.end(
    `HTTP/1.1 ${status} Error\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  )
}

const tagOf = (error: { readonly _tag: string }): ApiErrorTag =>
  error._tag === "SandboxNotFound" ? "NotFound" : error._tag === "SandboxConflict" ? "Conflict" : "Internal"

/**
 * The socket's upgrade handler for SSH: opens the sandbox's server through
 * the engine and joins the connection to it byte for byte until either side
 * ends. Refusals (no such sandbox, not running: with `prbox restart`) are
 * answered as API errors before any SSH byte.
 */
export const sshUpgrade = Effect.gen(function* () {
  const ssh = yield* Ssh
  const services = yield* Effect.context<never>()
  return (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const [path = "", query = ""] = (req.url ?? "").split("?")
    const match = SSH_PATH.exec(path)
    if (req.method !== "POST" || match === null || req.headers.upgrade !== SSH_UPGRADE) {
      answer(socket, "NotFound", `no such upgrade: ${req.method} ${req.url}`)
      return
    }
    const id = match[1] ?? ""
    if (!isSandboxId(id)) {
      answer(socket, "NotFound", `no sandbox ${id}`)
      return
    }
    const dial = new URLSearchParams(query).get("socket") ?? undefined
    if (dial !== undefined && !SSH_SOCKET_NAME.test(dial)) {
      answer(socket, "BadRequest", "socket: not a name prbox makes")
      return
    }
    socket.on("error", () => socket.destroy())
    // A client gone while its server starts (up to the server's timeout) ends it once it has.
    let gone = false
    socket.once("close", () => {
      gone = true
    })
    void Effect.runPromiseWith(services)(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const opened = yield* Effect.exit(Scope.provide(ssh.open(id, dial), scope))
        if (Exit.isFailure(opened)) {
          yield* Scope.close(scope, Exit.void)
          const error = opened.cause.reasons.find((reason) => reason._tag === "Fail")
          if (error === undefined || error._tag !== "Fail") {
            yield* Effect.logError("ssh failed", opened.cause)
            return answer(socket, "Internal", "internal error in prboxd; see its log")
          }
          return answer(socket, tagOf(error.error), error.error.message)
        }
        if (gone) return yield* Scope.close(scope, Exit.void)
        const connection = opened.value
        const close = () => void Effect.runFork(Scope.close(scope, Exit.void))
        const transport = connection._tag === "Dialled" ? "socket" : "piped"
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${SSH_UPGRADE}\r\nConnection: Upgrade\r\nPrbox-Ssh-Transport: ${transport}\r\n\r\n`
        )
        socket.once("close", close)
        if (connection._tag === "Dialled") {
          // Nothing more comes either way: the client's is dropped, a byte of the server's ends it; either end ends both.
          socket.resume()
          connection.ended.on("data", () => socket.destroy())
          connection.ended.on("error", () => socket.destroy())
          connection.ended.once("close", () => socket.destroy())
          return
        }
        const { input, output } = connection
        if (head.length > 0) input.write(head)
        socket.pipe(input)
        output.pipe(socket)
        input.on("error", () => socket.destroy())
        output.on("error", () => socket.destroy())
        output.once("close", () => socket.destroy())
      })
    )
  }
})
