import { stat } from "node:fs/promises"
import type { SandboxId } from "@prbox/domain"
import type { ContainerRuntimeShape, SandboxServiceShape } from "@prbox/engine"
import {
  type ApiError,
  Conflict,
  DEFAULT_EXEC_TIMEOUT_MS,
  DockerUnavailable,
  type ExecRequest,
  type ExecResult,
  MAX_EXEC_OUTPUT
} from "@prbox/protocol"
import { Clock, Effect } from "effect"
import { api } from "./Mapping.ts"

/** Where the engine mounts the workspace, and the user it runs a root-owned workspace as. */
const CONTAINER_WORKSPACE = "/workspace"
const FALLBACK_UID = 1000

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
 * Runs `argv` in a running sandbox as the workspace's owner (the user its
 * setup commands run as), in the workspace, without stdin, bounded in time
 * and output. Fenced or non-running sandboxes are refused with Conflict.
 */
export const exec = (
  sandboxes: SandboxServiceShape,
  runtime: ContainerRuntimeShape,
  id: SandboxId,
  request: ExecRequest
): Effect.Effect<ExecResult, ApiError> =>
  Effect.gen(function* () {
    const row = yield* api(sandboxes.get(id))
    if (row.destroyFenced) {
      return yield* new Conflict({
        message: `sandbox ${id} is fenced: an earlier destroy was not confirmed; run \`prbox rm ${id}\``
      })
    }
    if (row.status !== "running" || row.containerId === null) {
      return yield* new Conflict({
        message: `sandbox ${id} is ${row.status}, not running; exec needs a running sandbox`
      })
    }
    const containerId = row.containerId
    const workspace = row.workspacePath
    const user = yield* Effect.promise(() =>
      workspace === null
        ? Promise.resolve(`${FALLBACK_UID}:${FALLBACK_UID}`)
        : stat(workspace).then(
            (s) => (s.uid === 0 ? `${FALLBACK_UID}:${FALLBACK_UID}` : `${s.uid}:${s.gid}`),
            () => `${FALLBACK_UID}:${FALLBACK_UID}`
          )
    )
    yield* api(sandboxes.touch(id))
    const timeoutMs = request.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS
    const started = yield* Clock.currentTimeMillis
    const outcome = yield* Effect.result(
      runtime.exec(containerId, request.argv, { user, cwd: CONTAINER_WORKSPACE, timeoutMs })
    )
    if (outcome._tag === "Failure") {
      // Docker cannot kill an exec: past its deadline the runtime gives up on it.
      if ((yield* Clock.currentTimeMillis) - started >= timeoutMs) {
        return { exitCode: null, output: "", truncated: false, timedOut: true }
      }
      return yield* new DockerUnavailable({ message: outcome.failure.message })
    }
    const { text, truncated } = bound(outcome.success.output, request.maxOutputBytes ?? MAX_EXEC_OUTPUT)
    return { exitCode: outcome.success.exitCode, output: text, truncated, timedOut: false }
  })
