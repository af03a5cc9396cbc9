import { type Readable, Writable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect } from "effect"
import { ContainerNotFound, type DockerEngineError, EngineUnavailable } from "./DockerError.ts"
import { classify } from "./EngineCall.ts"

/** A sink keeping at most `limit` bytes; the rest is read and dropped so the writer never blocks. */
export const cappedSink = (limit: number) => {
  const chunks: Array<Buffer> = []
  let size = 0
  let truncated = false
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const kept = chunk.subarray(0, Math.max(0, limit - size))
      if (kept.length < chunk.length) truncated = true
      chunks.push(kept)
      size += kept.length
      done()
    }
  })
  return { sink, text: () => Buffer.concat(chunks).toString("utf8"), truncated: () => truncated }
}

/** Splits the engine's multiplexed stream into stdout and stderr (docker-modem's). */
export type Demux = (stream: Readable, stdout: Writable, stderr: Writable) => void

/** Runs a created exec to its end, collecting output; interruption closes the stream. */
export const runExec = (demux: Demux, exec: Dockerode.Exec, maxOutputBytes: number, secrets: ReadonlyArray<string>) =>
  Effect.callback<
    { readonly stdout: string; readonly stderr: string; readonly truncated: boolean },
    ContainerNotFound | EngineUnavailable | DockerEngineError
  >((resume) => {
    const stdout = cappedSink(maxOutputBytes)
    const stderr = cappedSink(maxOutputBytes)
    let stream: Readable | undefined
    let interrupted = false
    let ended = false
    exec.start({ hijack: true, stdin: false }).then(
      (duplex) => {
        if (interrupted) {
          duplex.destroy()
          return
        }
        stream = duplex
        demux(duplex, stdout.sink, stderr.sink)
        duplex.on("end", () => {
          ended = true
          resume(
            Effect.succeed({
              stdout: stdout.text(),
              stderr: stderr.text(),
              truncated: stdout.truncated() || stderr.truncated()
            })
          )
        })
        duplex.on("error", (cause) =>
          resume(Effect.fail(classify("container.exec", { 404: ContainerNotFound }, secrets)(cause)))
        )
        duplex.on("close", () => {
          if (!ended) {
            resume(
              Effect.fail(
                new EngineUnavailable({
                  operation: "container.exec",
                  detail: "output stream closed before the end"
                })
              )
            )
          }
        })
      },
      (cause) => resume(Effect.fail(classify("container.exec", { 404: ContainerNotFound }, secrets)(cause)))
    )
    return Effect.sync(() => {
      interrupted = true
      stream?.destroy()
    })
  })
