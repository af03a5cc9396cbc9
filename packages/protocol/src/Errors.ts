import { Schema } from "effect"
// Registers the `httpApiStatus` annotation used below.
import type {} from "effect/http-api/HttpApiSchema"

/**
 * Every error the daemon answers with: a stable `_tag`, a message safe to
 * show (ids, statuses and fixed reasons, never a password), and an HTTP
 * status. On the wire an error is `{"_tag": "...", "message": "..."}`.
 */
const fields = { message: Schema.String }

/** No sandbox has that id (or no sandbox matches that prefix or pull request). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields, { httpApiStatus: 404 }) {}

/** A prefix or pull request names more than one sandbox. */
export class Ambiguous extends Schema.TaggedError<Ambiguous>()("Ambiguous", fields, { httpApiStatus: 404 }) {}

/** The request contradicts the sandbox's state: stopping, fenced, retired, not running. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", fields, { httpApiStatus: 409 }) {}

/** The pull request reference could not be understood. */
export class InvalidPrRef extends Schema.TaggedError<InvalidPrRef>()("InvalidPrRef", fields, { httpApiStatus: 400 }) {}

/** `$PRBOX_HOME/config.json` is not valid. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", fields, {
  httpApiStatus: 422
}) {}

/** Docker could not be reached or did not confirm an operation. */
export class DockerUnavailable extends Schema.TaggedError<DockerUnavailable>()("DockerUnavailable", fields, {
  httpApiStatus: 503
}) {}

/** git could not fetch or build the workspace. */
export class GitFailure extends Schema.TaggedError<GitFailure>()("GitFailure", fields, { httpApiStatus: 502 }) {}

/** The daemon is at its limit of concurrent requests or streams; retry after `Retry-After`. */
export class Busy extends Schema.TaggedError<Busy>()("Busy", fields, { httpApiStatus: 503 }) {}

/** Malformed JSON, wrong types, a missing field, an unknown route. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields, { httpApiStatus: 400 }) {}

/** The request body is larger than the daemon accepts. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields, {
  httpApiStatus: 413
}) {}

/** The operation exists in the API but this daemon build cannot perform it. */
export class NotAvailable extends Schema.TaggedError<NotAvailable>()("NotAvailable", fields, {
  httpApiStatus: 501
}) {}

/** Anything else (a store failure, a bug); the message says what failed. */
export class Internal extends Schema.TaggedError<Internal>()("Internal", fields, { httpApiStatus: 500 }) {}

/** Every error an endpoint can answer with; each endpoint declares all of them. */
export const ApiErrors = [
  NotFound,
  Ambiguous,
  Conflict,
  InvalidPrRef,
  InvalidConfig,
  DockerUnavailable,
  GitFailure,
  Busy,
  BadRequest,
  PayloadTooLarge,
  NotAvailable,
  Internal
] as const

export type ApiError =
  | NotFound
  | Ambiguous
  | Conflict
  | InvalidPrRef
  | InvalidConfig
  | DockerUnavailable
  | GitFailure
  | Busy
  | BadRequest
  | PayloadTooLarge
  | NotAvailable
  | Internal

export type ApiErrorTag = ApiError["_tag"]

const apiErrorClasses: ReadonlyArray<abstract new (...args: never) => ApiError> = ApiErrors

export const isApiError = (error: unknown): error is ApiError =>
  apiErrorClasses.some((errorClass) => error instanceof errorClass)

/** The wire body of an error, for answers built outside the API (the socket's bounds). */
export const errorBody = (tag: ApiErrorTag, message: string): string => JSON.stringify({ _tag: tag, message })
