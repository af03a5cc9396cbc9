import { Writable } from "node:stream"

/**
 * Keeps at most `limit` bytes of what it is given (`add`, or written to
 * `sink`); the rest is read and dropped so the writer never blocks.
 */
export const cappedSink = (limit: number) => {
  const chunks: Array<Uint8Array> = []
  let size = 0
  let truncated = false
  const add = (chunk: Uint8Array) => {
    const kept = chunk.subarray(0, Math.max(0, limit - size))
    if (kept.length < chunk.length) truncated = true
    if (kept.length === 0) return
    // A copy: a view would keep the whole chunk it came in (a 64 KiB read for a byte of output).
    chunks.push(new Uint8Array(kept))
    size += kept.length
  }
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      add(chunk)
      done()
    }
  })
  return { sink, add, text: () => Buffer.concat(chunks).toString("utf8"), truncated: () => truncated }
}
