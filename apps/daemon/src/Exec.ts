import type { SandboxId } from "@prbox/domain"
import type { SandboxServiceShape } from "@prbox/engine"
import {
  type ApiError,
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecRequest,
  type ExecResult,
  MAX_EXEC_OUTPUT
} from "@prbox/protocol"
import type { Effect } from "effect"
import { api } from "./Mapping.ts"

/**
 * Runs `argv` in a running sandbox through the engine (which refuses fenced or
 * non-running sandboxes), bounded as the request says (the API's bound by default).
 */
export const exec = (
  sandboxes: SandboxServiceShape,
  id: SandboxId,
  request: ExecRequest
): Effect.Effect<ExecResult, ApiError> =>
  api(
    sandboxes.exec(id, request.argv, {
      timeoutMs: request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS,
      maxOutputBytes: request.maxOutputBytes ?? MAX_EXEC_OUTPUT,
      ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
      ...(request.env === undefined ? {} : { env: request.env })
    })
  )
