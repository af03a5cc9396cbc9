import { Data } from "effect"

/**
 * What a failed tool call tells an agent: a stable `code` it can switch on and
 * a message that says what to do next. Pure: the mapping from the client's
 * errors (the daemon's API errors, an unreachable daemon) to the codes.
 */

/** The stable codes of a tool error (the README lists them). */
export const TOOL_ERROR_CODES = [
  "not_found",
  "not_running",
  "fenced",
  "invalid_path",
  "timeout",
  "too_large",
  "conflict",
  "daemon_unreachable",
  "invalid_input",
  "docker_unavailable",
  "busy",
  "internal"
] as const
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number]

export interface ToolError {
  readonly code: ToolErrorCode
  readonly message: string
}

/** An error as the client hands it over: a tag, its safe message, and a Conflict's `state`. */
export interface TaggedFailure {
  readonly _tag: string
  readonly message: string
  readonly state?: "not-running" | "fenced" | undefined
}

/** What to do next, per code, appended to the daemon's own message. */
const advice: Record<ToolErrorCode, string> = {
  not_found: "check the id with sandbox_list, or open the PR with sandbox_open",
  not_running: "open it again with sandbox_open (its workspace is kept)",
  fenced:
    "an earlier stop or delete was not confirmed; stop it with sandbox_stop {delete: true}, then open the PR again",
  invalid_path: "pass a path relative to the workspace that stays inside it; sandbox_list_files shows what exists",
  timeout: "try again; for a long command use sandbox_exec with background: true and read it with sandbox_job",
  too_large: "ask for less: a line range, a smaller maxBytes, or fewer paths",
  conflict: "read the current state (sandbox_status, or read the file again) and retry",
  daemon_unreachable: "prboxd is not answering; restart this MCP server (it starts prboxd) or run `prbox daemon start`",
  invalid_input: "fix the arguments as the message says",
  docker_unavailable: "Docker is not reachable from prboxd; the user must start Docker",
  busy: "prboxd is at its limit of concurrent requests; retry in a few seconds",
  internal: "retry once; if it fails again, report it with `prbox daemon logs`"
}

const codeOf = (error: TaggedFailure): ToolErrorCode => {
  switch (error._tag) {
    case "NotFound":
      return "not_found"
    case "Conflict":
      return error.state === "not-running" ? "not_running" : error.state === "fenced" ? "fenced" : "conflict"
    case "UpdateRefused":
    case "PushRefused":
      return "conflict"
    case "InvalidPath":
      return "invalid_path"
    case "TooLarge":
    case "PayloadTooLarge":
      return "too_large"
    case "Ambiguous":
    case "InvalidPrRef":
    case "InvalidConfig":
    case "InvalidDevcontainer":
    case "BadRequest":
    case "InvalidInput":
      return "invalid_input"
    case "DaemonUnreachable":
    case "DaemonStopped":
    case "IncompatibleDaemon":
      return "daemon_unreachable"
    case "Timeout":
      return "timeout"
    case "DockerUnavailable":
      return "docker_unavailable"
    case "Busy":
      return "busy"
    default:
      // GitFailure, NotAvailable, Internal, ProtocolError (an answer that was not the API's).
      return "internal"
  }
}

/** The tool error for a failure of a call: its code, and the daemon's message with what to do. */
export const toToolError = (error: TaggedFailure): ToolError => {
  const code = codeOf(error)
  return { code, message: `${error.message}; ${advice[code]}` }
}

/** The text an agent reads first: `<code>: <message>`. */
export const renderToolError = (error: ToolError): string => `${error.code}: ${error.message}`

/** Our own refusal of the arguments (what a schema cannot say), as a failure of the same shape. */
export class InvalidInput extends Data.TaggedError("InvalidInput")<{ readonly message: string }> {}

/** A deadline of the MCP server's own (sandbox_open's wait), as a failure of the same shape. */
export class Timeout extends Data.TaggedError("Timeout")<{ readonly message: string }> {}
