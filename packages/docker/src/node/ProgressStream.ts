import type { Readable } from "node:stream"
import { Effect, Schema } from "effect"
import { EngineUnavailable } from "../DockerError.ts"

/**
 * Reads one of the engine's JSON-lines progress streams (pull, import,
 * build). The engine answers 200 before the work is done, so a failure
 * arrives as an entry: `onEntry` returns the failure an entry carries, and
 * the first one (or a malformed entry, or a stream cut short) fails the whole
 * read once the stream ends.
 */
export const followProgress = <A, E>(options: {
  readonly operation: string
  /** What the stream is about, for the messages (an image reference). */
  readonly subject: string
  readonly response: Readable
  readonly entry: Schema.ConstraintDecoder<A>
  readonly onEntry: (entry: A) => string | undefined
  readonly fail: (detail: string) => E
}): Effect.Effect<void, E | EngineUnavailable> =>
  Effect.callback<void, E | EngineUnavailable>((resume) => {
    const { operation, subject, response, fail } = options
    const decode = Schema.decodeUnknownOption(options.entry)
    let pending = ""
    let failure: string | undefined
    const handle = (line: string) => {
      let json: unknown
      try {
        json = JSON.parse(line)
      } catch {
        failure ??= `malformed progress entry for ${subject}`
        return
      }
      const entry = decode(json)
      if (entry._tag === "None") {
        failure ??= `malformed progress entry for ${subject}`
        return
      }
      const failed = options.onEntry(entry.value)
      if (failed !== undefined) failure ??= failed
    }
    response.setEncoding("utf8")
    response.on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) if (line.trim().length > 0) handle(line.trim())
    })
    response.on("end", () => {
      if (pending.trim().length > 0) handle(pending.trim())
      resume(failure === undefined ? Effect.void : Effect.fail(fail(failure)))
    })
    response.on("error", (cause) => resume(Effect.fail(new EngineUnavailable({ operation, detail: String(cause) }))))
    response.on("close", () => {
      if (!response.readableEnded) resume(Effect.fail(fail(`progress stream of ${subject} ended early`)))
    })
    return Effect.sync(() => response.destroy())
  })
