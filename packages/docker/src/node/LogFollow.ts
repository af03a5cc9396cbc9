import type { Readable } from "node:stream"
import { Writable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect } from "effect"
import type { Unreachable } from "../Docker.ts"
import { ContainerNotFound, EngineUnavailable } from "../DockerError.ts"
import { demuxStream } from "./Demux.ts"
import { call, classify } from "./EngineCall.ts"

const OPERATION = "container.logs"

/** The most of an unfinished line kept: a container printing without newlines costs no more. */
const MAX_PENDING = 64 * 1024

/** Hands each complete line written to it to `onLine` (a partial last line waits for its end, its last MAX_PENDING characters kept). */
const lineSink = (onLine: (line: string) => void) => {
  let pending = ""
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      const lines = (pending + chunk.toString("utf8")).split("\n")
      pending = (lines.pop() ?? "").slice(-MAX_PENDING)
      for (const line of lines) onLine(line)
      done()
    }
  })
}

/**
 * Follows a container's output (stdout and stderr, each line by line) from
 * `since` until `matches` accepts a line (true) or the output ends because the
 * container stopped (false). The stream is closed when it returns or is
 * interrupted.
 */
export const makeAwaitLogLine =
  (api: Dockerode) => (id: string, options: { readonly since: Date; readonly matches: (line: string) => boolean }) =>
    Effect.flatMap(
      call(
        OPERATION,
        (abortSignal) =>
          api.getContainer(id).logs({
            stdout: true,
            stderr: true,
            follow: true,
            // Seconds with a fraction: the engine keeps sub-second times, and a restarted
            // container's earlier output (a line of its last run) must not count.
            since: (options.since.getTime() / 1000).toFixed(3) as unknown as number,
            abortSignal
          }) as Promise<Readable>,
        { 404: ContainerNotFound }
      ),
      (stream) =>
        Effect.callback<boolean, ContainerNotFound | Unreachable>((resume) => {
          let settled = false
          const settle = (effect: Effect.Effect<boolean, ContainerNotFound | Unreachable>) => {
            if (settled) return
            settled = true
            stream.destroy()
            resume(effect)
          }
          const onLine = (line: string) => {
            if (options.matches(line)) settle(Effect.succeed(true))
          }
          demuxStream(stream, lineSink(onLine), lineSink(onLine))
          stream.on("end", () => settle(Effect.succeed(false)))
          stream.on("error", (cause) => settle(Effect.fail(classify(OPERATION, { 404: ContainerNotFound })(cause))))
          stream.on("close", () =>
            settle(
              Effect.fail(
                new EngineUnavailable({ operation: OPERATION, detail: "output stream closed before the end" })
              )
            )
          )
          return Effect.sync(() => {
            settled = true
            stream.destroy()
          })
        })
    ).pipe(Effect.withSpan("Docker.awaitLogLine"))
