import type { Readable } from "node:stream"
import { Schema } from "effect"
import { ImagePullFailed } from "../DockerError.ts"
import { redact } from "./EngineCall.ts"
import { followProgress } from "./ProgressStream.ts"

/** An entry of a pull's or an import's progress stream. */
export const StatusEntry = Schema.Struct({
  status: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  progress: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String),
  errorDetail: Schema.optional(Schema.Struct({ message: Schema.optional(Schema.String) }))
})

/** Reports a status entry as one line; returns the failure an error entry carries. */
export const statusLine =
  (onProgress: (line: string) => void) =>
  ({ status, id, progress, error, errorDetail }: typeof StatusEntry.Type): string | undefined => {
    if (error !== undefined || errorDetail?.message !== undefined) return error ?? errorDetail?.message
    if (status !== undefined) onProgress([id, status, progress].filter((part) => part).join(" "))
    return undefined
  }

/**
 * Reads a pull's JSON progress stream; an `error` entry fails the pull even
 * though the HTTP answer was 200. `secrets` (a login's) are cut from its detail.
 */
export const followPull = (
  ref: string,
  response: Readable,
  onProgress: (line: string) => void,
  secrets: ReadonlyArray<string> = []
) =>
  followProgress({
    operation: "image.pull",
    subject: ref,
    response,
    entry: StatusEntry,
    onEntry: statusLine(onProgress),
    fail: (detail) => new ImagePullFailed({ operation: "image.pull", detail: redact(detail, secrets) })
  })
