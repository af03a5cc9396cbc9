import { ConflictState, PUSH_REFUSALS } from "@prbox/domain"
import { Schema } from "effect"
// Registers the `httpApiStatus` annotation used below.
import type {} from "effect/http-api/HttpApiSchema"
import { ExitCode } from "./ExitCodes.ts"

export { ExitCode }

/**
 * The one table of what each API error means at the boundaries: its HTTP
 * status (the daemon's answer) and the CLI's exit code for it.
 */
export const ErrorCodes = {
  NotFound: { httpStatus: 404, exitCode: ExitCode.notFound },
  Ambiguous: { httpStatus: 404, exitCode: ExitCode.notFound },
  Conflict: { httpStatus: 409, exitCode: ExitCode.conflict },
  UpdateRefused: { httpStatus: 409, exitCode: ExitCode.conflict },
  PushRefused: { httpStatus: 409, exitCode: ExitCode.conflict },
  InvalidPrRef: { httpStatus: 400, exitCode: ExitCode.usage },
  InvalidConfig: { httpStatus: 422, exitCode: ExitCode.invalidConfig },
  InvalidDevcontainer: { httpStatus: 422, exitCode: ExitCode.usage },
  DockerUnavailable: { httpStatus: 503, exitCode: ExitCode.dockerUnavailable },
  GitFailure: { httpStatus: 502, exitCode: ExitCode.other },
  Busy: { httpStatus: 503, exitCode: ExitCode.busy },
  BadRequest: { httpStatus: 400, exitCode: ExitCode.usage },
  PayloadTooLarge: { httpStatus: 413, exitCode: ExitCode.usage },
  InvalidPath: { httpStatus: 400, exitCode: ExitCode.usage },
  TooLarge: { httpStatus: 413, exitCode: ExitCode.usage },
  NotAvailable: { httpStatus: 501, exitCode: ExitCode.other },
  Internal: { httpStatus: 500, exitCode: ExitCode.other }
} as const satisfies Record<string, { readonly httpStatus: number; readonly exitCode: number }>

export type ApiErrorTag = keyof typeof ErrorCodes

/** The table's lookup: the CLI's exit code for an error tag (1 for a tag that is not an API error). */
export const exitCodeOf = (tag: string): number =>
  Object.hasOwn(ErrorCodes, tag) ? ErrorCodes[tag as ApiErrorTag].exitCode : ExitCode.other

const status = (tag: ApiErrorTag) => ({ httpApiStatus: ErrorCodes[tag].httpStatus })

/**
 * Every error the daemon answers with: a stable `_tag`, a message safe to
 * show (ids, statuses and fixed reasons, never a password), and the HTTP
 * status of the table above. On the wire an error is `{"_tag": "...", "message": "..."}`.
 */
const fields = { message: Schema.String }

/** No sandbox has that id (or no sandbox matches that prefix or pull request). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", fields, status("NotFound")) {}

/** A prefix or pull request names more than one sandbox. */
export class Ambiguous extends Schema.TaggedError<Ambiguous>()("Ambiguous", fields, status("Ambiguous")) {}

/**
 * The request contradicts the sandbox's state: stopping, fenced, retired, not
 * running. `state` says which when a client would act on it.
 */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { ...fields, state: Schema.optionalKey(ConflictState) },
  status("Conflict")
) {}

/**
 * `prbox update` moved nothing: the workspace has changes (listed, also in
 * `changedFiles`) or the PR's new head is not a fast-forward without `--force`.
 */
export class UpdateRefused extends Schema.TaggedError<UpdateRefused>()(
  "UpdateRefused",
  {
    ...fields,
    /** The workspace's changed files; absent when the refusal is about history (a force-push). */
    changedFiles: Schema.optionalKey(Schema.Array(Schema.String))
  },
  status("UpdateRefused")
) {}

/**
 * `prbox push` pushed nothing and changed nothing: `kind` says why (no new
 * commits, not a fast-forward, uncommitted changes (in `changedFiles`), the
 * PR moved, the lease failed, ...), the message what to do.
 */
export class PushRefused extends Schema.TaggedError<PushRefused>()(
  "PushRefused",
  {
    ...fields,
    kind: Schema.Literals(PUSH_REFUSALS),
    changedFiles: Schema.optionalKey(Schema.Array(Schema.String))
  },
  status("PushRefused")
) {}

/** The pull request reference could not be understood. */
export class InvalidPrRef extends Schema.TaggedError<InvalidPrRef>()("InvalidPrRef", fields, status("InvalidPrRef")) {}

/** `$PRBOX_HOME/config.json` is not valid. */
export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()(
  "InvalidConfig",
  fields,
  status("InvalidConfig")
) {}

/** The PR's devcontainer.json cannot be used (invalid, or asks for what PR content may not have). */
export class InvalidDevcontainer extends Schema.TaggedError<InvalidDevcontainer>()(
  "InvalidDevcontainer",
  fields,
  status("InvalidDevcontainer")
) {}

/** Docker could not be reached or did not confirm an operation. */
export class DockerUnavailable extends Schema.TaggedError<DockerUnavailable>()(
  "DockerUnavailable",
  fields,
  status("DockerUnavailable")
) {}

/** git could not fetch or build the workspace. */
export class GitFailure extends Schema.TaggedError<GitFailure>()("GitFailure", fields, status("GitFailure")) {}

/** The daemon is at its limit of concurrent requests or streams; retry after `Retry-After`. */
export class Busy extends Schema.TaggedError<Busy>()("Busy", fields, status("Busy")) {}

/** Malformed JSON, wrong types, a missing field, an unknown route. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", fields, status("BadRequest")) {}

/** The request body is larger than the daemon accepts. */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  fields,
  status("PayloadTooLarge")
) {}

/** A path outside the sandbox's workspace (absolute, `..`, a symlink out), missing, or of the wrong kind. */
export class InvalidPath extends Schema.TaggedError<InvalidPath>()("InvalidPath", fields, status("InvalidPath")) {}

/** A file or input larger than the operation takes; the message names the limit. */
export class TooLarge extends Schema.TaggedError<TooLarge>()("TooLarge", fields, status("TooLarge")) {}

/** The operation exists in the API but this daemon build cannot perform it. */
export class NotAvailable extends Schema.TaggedError<NotAvailable>()("NotAvailable", fields, status("NotAvailable")) {}

/** Anything else (a store failure, a bug); the message says what failed. */
export class Internal extends Schema.TaggedError<Internal>()("Internal", fields, status("Internal")) {}

/** Every error an endpoint can answer with; each endpoint declares all of them. */
export const ApiErrors = [
  NotFound,
  Ambiguous,
  Conflict,
  UpdateRefused,
  PushRefused,
  InvalidPrRef,
  InvalidConfig,
  DockerUnavailable,
  GitFailure,
  InvalidDevcontainer,
  Busy,
  BadRequest,
  PayloadTooLarge,
  InvalidPath,
  TooLarge,
  NotAvailable,
  Internal
] as const

export type ApiError =
  | NotFound
  | Ambiguous
  | Conflict
  | UpdateRefused
  | PushRefused
  | InvalidPrRef
  | InvalidConfig
  | DockerUnavailable
  | GitFailure
  | InvalidDevcontainer
  | Busy
  | BadRequest
  | PayloadTooLarge
  | InvalidPath
  | TooLarge
  | NotAvailable
  | Internal

const apiErrorClasses: ReadonlyArray<abstract new (...args: never) => ApiError> = ApiErrors

export const isApiError = (error: unknown): error is ApiError =>
  apiErrorClasses.some((errorClass) => error instanceof errorClass)

/** The wire body of an error, for answers built outside the API (the socket's bounds). */
export const errorBody = (tag: ApiErrorTag, message: string): string => JSON.stringify({ _tag: tag, message })
