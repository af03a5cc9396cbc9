import type { SandboxId } from "@prbox/domain"
import type { SandboxServiceShape } from "@prbox/engine"
import {
  type ApiError,
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecRequest,
  type ExecResult,
  MAX_EXEC_OUTPUT
} from "@prbox/protocol"
import { Effect } from "effect"
import { api } from "./Mapping.ts"

/** Cuts `text` to at most `max` UTF-8 bytes. */
export const bound = (text: string, max: number): { readonly text: string; readonly truncated: boolean } => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= max) return { text, truncated: false }
  // Drop a partial character at the cut.
  return {
    text: new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(0, max)).replace(/\uFFFD$/, ""),
    truncated: true
  }
}

/**
 * Runs `argv` in a running sandbox through the engine (which refuses fenced or
 * non-running sandboxes); the answer is cut to the API's output bound.
 */
export const exec = (
  sandboxes: SandboxServiceShape,
  id: SandboxId,
  request: ExecRequest
): Effect.Effect<ExecResult, ApiError> =>
  Effect.gen(function* () {
    const maxOutputBytes = request.maxOutputBytes ?? MAX_EXEC_OUTPUT
    const outcome = yield* api(
      sandboxes.exec(id, request.argv, { timeoutMs: request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS, maxOutputBytes })
    )
    const { text, truncated } = bound(outcome.output, maxOutputBytes)
    return {
      exitCode: outcome.exitCode,
      output: text,
      truncated: truncated || outcome.truncated,
      timedOut: outcome.timedOut
    }
  })
