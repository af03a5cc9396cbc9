import { DaemonStopped, DaemonUnreachable, IncompatibleDaemon, ProtocolError } from "@prbox/client"
import {
  Ambiguous,
  BadRequest,
  Busy,
  Conflict,
  DockerUnavailable,
  GitFailure,
  Internal,
  InvalidConfig,
  InvalidDevcontainer,
  InvalidPath,
  InvalidPrRef,
  NotAvailable,
  NotFound,
  PayloadTooLarge,
  TooLarge,
  UpdateRefused
} from "@prbox/protocol"
import { describe, expect, it } from "vitest"
import {
  InvalidInput,
  renderToolError,
  type TaggedFailure,
  Timeout,
  TOOL_ERROR_CODES,
  type ToolErrorCode,
  toToolError
} from "../src/ToolErrors.ts"

const message = "sandbox abc: it said so"

describe("toToolError: the stable code of every failure a tool can meet", () => {
  const cases: ReadonlyArray<readonly [failure: TaggedFailure, code: ToolErrorCode]> = [
    [new NotFound({ message }), "not_found"],
    [new Conflict({ message, state: "not-running" }), "not_running"],
    [new Conflict({ message, state: "fenced" }), "fenced"],
    [new Conflict({ message }), "conflict"],
    [new UpdateRefused({ message }), "conflict"],
    [new InvalidPath({ message }), "invalid_path"],
    [new TooLarge({ message }), "too_large"],
    [new PayloadTooLarge({ message }), "too_large"],
    [new Ambiguous({ message }), "invalid_input"],
    [new InvalidPrRef({ message }), "invalid_input"],
    [new InvalidConfig({ message }), "invalid_input"],
    [new InvalidDevcontainer({ message }), "invalid_input"],
    [new BadRequest({ message }), "invalid_input"],
    [new InvalidInput({ message }), "invalid_input"],
    [new DaemonUnreachable({ message, socketPath: "/run/prboxd.sock" }), "daemon_unreachable"],
    [new DaemonStopped({ message, sandboxId: "abc" }), "daemon_unreachable"],
    [new IncompatibleDaemon({ message }), "daemon_unreachable"],
    [new Timeout({ message }), "timeout"],
    [new DockerUnavailable({ message }), "docker_unavailable"],
    [new Busy({ message }), "busy"],
    [new GitFailure({ message }), "internal"],
    [new NotAvailable({ message }), "internal"],
    [new Internal({ message }), "internal"],
    [new ProtocolError({ message }), "internal"]
  ]
  for (const [failure, code] of cases) {
    it(`${failure._tag}${failure.state === undefined ? "" : ` (${failure.state})`} → ${code}`, () => {
      const error = toToolError(failure)
      expect(error.code).toBe(code)
      // The daemon's own message, then what to do: never the message alone.
      expect(error.message.startsWith(`${message}; `)).toBe(true)
      expect(error.message.length).toBeGreaterThan(message.length + 20)
    })
  }

  it("every code is one of the stable codes, and each says what to do differently", () => {
    const advice = new Set(cases.map(([failure]) => toToolError(failure).message))
    expect(new Set(cases.map(([failure]) => toToolError(failure).code))).toEqual(new Set(TOOL_ERROR_CODES))
    expect(advice.size).toBe(TOOL_ERROR_CODES.length)
  })

  it("an unknown tag is internal, never passed off as something the agent could fix", () => {
    expect(toToolError({ _tag: "SomethingNew", message }).code).toBe("internal")
  })

  it("renders as `<code>: <message>`", () => {
    expect(renderToolError({ code: "not_running", message: "m" })).toBe("not_running: m")
  })
})
