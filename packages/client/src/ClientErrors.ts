import { type ApiError, isApiError } from "@prbox/protocol"
import { Schema } from "effect"
import { HttpClientError } from "effect/http"

/** Nothing answers on the socket: no daemon, a stale socket, or no permission. */
export class DaemonUnreachable extends Schema.TaggedError<DaemonUnreachable>()("DaemonUnreachable", {
  message: Schema.String,
  socketPath: Schema.String
}) {}

/** A daemon answers but does not serve the API generation this client speaks. */
export class IncompatibleDaemon extends Schema.TaggedError<IncompatibleDaemon>()("IncompatibleDaemon", {
  message: Schema.String
}) {}

/** The daemon's answer was not what the API declares (or it took too long). */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  message: Schema.String
}) {}

export type ClientError = ApiError | DaemonUnreachable | IncompatibleDaemon | ProtocolError

const errorCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

/** Every failure of a call, as one of our tagged errors. */
export const normalizeError =
  (socketPath: string) =>
  (error: unknown): ClientError => {
    if (isApiError(error)) return error
    if (error instanceof DaemonUnreachable || error instanceof IncompatibleDaemon || error instanceof ProtocolError) {
      return error
    }
    if (HttpClientError.isHttpClientError(error)) {
      const reason = error.reason
      if (reason._tag === "TransportError") {
        const code = errorCode(reason.cause)
        const why =
          code === "ENOENT"
            ? "no daemon socket"
            : code === "ECONNREFUSED"
              ? "nothing listens on the socket"
              : code === "EACCES"
                ? "permission denied"
                : code === "ECONNRESET" || code === "EPIPE"
                  ? "the connection was closed"
                  : (code ?? "connection failed")
        return new DaemonUnreachable({
          message: `prboxd is not reachable at ${socketPath} (${why})`,
          socketPath
        })
      }
      if (reason._tag === "StatusCodeError") {
        return new ProtocolError({ message: `prboxd answered with HTTP ${reason.response.status}` })
      }
      return new ProtocolError({ message: `unexpected answer from prboxd: ${reason.message}` })
    }
    if (Schema.isSchemaError(error)) {
      return new ProtocolError({ message: `unexpected answer from prboxd: ${error.message}` })
    }
    return new ProtocolError({ message: error instanceof Error ? error.message : String(error) })
  }
