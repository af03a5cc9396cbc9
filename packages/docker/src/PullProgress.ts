import type { Readable } from "node:stream"
import { Effect, Schema } from "effect"
import { EngineUnavailable, ImagePullFailed } from "./DockerError.ts"

const PullEntry = Schema.Struct({
  status: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  progress: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String),
  errorDetail: Schema.optional(Schema.Struct({ message: Schema.optional(Schema.String) }))
})

/** Reads a pull's JSON progress stream; an `error` entry fails the pull even though the HTTP answer was 200. */
export const followPull = (ref: string, response: Readable, onProgress: (line: string) => void) =>
  Effect.callback<void, ImagePullFailed | EngineUnavailable>((resume) => {
    const operation = "image.pull"
    let pending = ""
    let failure: string | undefined
    const handle = (line: string) => {
      let json: unknown
      try {
        json = JSON.parse(line)
      } catch {
        failure ??= `malformed progress entry for ${ref}`
        return
      }
      const entry = Schema.decodeUnknownOption(PullEntry)(json)
      if (entry._tag === "None") {
        failure ??= `malformed progress entry for ${ref}`
        return
      }
      const { status, id, progress, error, errorDetail } = entry.value
      if (error !== undefined || errorDetail?.message !== undefined) {
        failure ??= error ?? errorDetail?.message
        return
      }
      if (status !== undefined) onProgress([id, status, progress].filter((part) => part).join(" "))
    }
    response.setEncoding("utf8")
    response.on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) if (line.trim().length > 0) handle(line.trim())
    })
    response.on("end", () => {
      if (pending.trim().length > 0) handle(pending.trim())
      resume(failure === undefined ? Effect.void : Effect.fail(new ImagePullFailed({ operation, detail: failure })))
    })
    response.on("error", (cause) => resume(Effect.fail(new EngineUnavailable({ operation, detail: String(cause) }))))
    response.on("close", () => {
      if (!response.readableEnded) {
        resume(Effect.fail(new ImagePullFailed({ operation, detail: `progress stream of ${ref} ended early` })))
      }
    })
    return Effect.sync(() => response.destroy())
  })
