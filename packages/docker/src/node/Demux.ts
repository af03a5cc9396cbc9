import type { Readable, Writable } from "node:stream"

/** Which of a command's outputs a piece of the engine's stream belongs to. */
export type OutputName = "stdout" | "stderr"

/** What a piece of the engine's multiplexed stream is: output (a view into the chunk it came in), or not multiplexed at all. */
export type Piece =
  | { readonly _tag: "Output"; readonly name: OutputName; readonly data: Uint8Array }
  /** The stream is not multiplexed (a container with a TTY): this and all that follows is stdout as it came. */
  | { readonly _tag: "Raw"; readonly data: Uint8Array }

const HEADER = 8
/** Stdout is 1; stdin's 0 (never output) counts as stderr, as docker-modem counts it, and so do the engine's own errors (3). */
const NAMES: Readonly<Record<number, OutputName>> = { 0: "stderr", 1: "stdout", 2: "stderr", 3: "stderr" }

/**
 * The engine's multiplexed stream (an 8-byte header: the stream, three zero
 * bytes, the payload's length big-endian; then the payload) cut into output
 * pieces as chunks arrive. A payload is handed on as views into the chunks
 * it arrives in, never copied or gathered whole: a frame split across
 * chunks is two pieces. A header that is not one means the stream is not
 * multiplexed; from there on everything is raw stdout (docker-modem's rule).
 */
export const makeFrameReader = () => {
  const header = new Uint8Array(HEADER)
  let headerBytes = 0
  let left = 0
  let name: OutputName = "stdout"
  let raw = false

  return (chunk: Uint8Array): Array<Piece> => {
    if (raw) return chunk.length === 0 ? [] : [{ _tag: "Raw", data: chunk }]
    const pieces: Array<Piece> = []
    let at = 0
    while (at < chunk.length) {
      if (left > 0) {
        const take = Math.min(left, chunk.length - at)
        pieces.push({ _tag: "Output", name, data: chunk.subarray(at, at + take) })
        left -= take
        at += take
        continue
      }
      const take = Math.min(HEADER - headerBytes, chunk.length - at)
      header.set(chunk.subarray(at, at + take), headerBytes)
      headerBytes += take
      at += take
      if (headerBytes < HEADER) break
      headerBytes = 0
      const known = NAMES[header[0] ?? 255]
      if (known === undefined || header[1] !== 0 || header[2] !== 0 || header[3] !== 0) {
        raw = true
        const rest = Buffer.concat([header, chunk.subarray(at)])
        pieces.push({ _tag: "Raw", data: rest })
        return pieces
      }
      name = known
      left = new DataView(header.buffer).getUint32(4)
    }
    return pieces
  }
}

/**
 * Splits the engine's multiplexed `source` into `stdout` and `stderr`
 * without copying the output, with backpressure: while either target asks
 * to wait, `source` is paused until that target drains (or closes: what
 * is meant for a target that is gone is dropped, never waited on). Neither
 * target is ended here: the caller knows when the command's output is over.
 */
export const demuxStream = (source: Readable, stdout: Writable, stderr: Writable): void => {
  const read = makeFrameReader()
  const waiting = new Set<Writable>()
  const gone = (target: Writable) => target.destroyed || target.writableEnded
  const wait = (target: Writable) => {
    if (waiting.has(target)) return
    waiting.add(target)
    const done = () => {
      target.off("drain", done).off("close", done)
      waiting.delete(target)
      if (waiting.size === 0) source.resume()
    }
    target.on("drain", done).on("close", done)
  }
  source.on("data", (chunk: Buffer) => {
    for (const piece of read(chunk)) {
      const target = piece._tag === "Output" && piece.name === "stderr" ? stderr : stdout
      if (!gone(target) && !target.write(piece.data)) wait(target)
    }
    if (waiting.size > 0) source.pause()
  })
}
