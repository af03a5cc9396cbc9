import { utf8CompleteLength, utf8ContinuationPrefix } from "./OutputBound.ts"

/** Job output the daemon keeps per job: its last bytes. */
export const JOB_OUTPUT_KEPT = 8 * 1024 * 1024

export interface JobOutputSlice {
  /** Where `text` starts: the offset asked for, or later when those bytes are no longer kept. */
  readonly offset: number
  readonly text: string
  readonly nextOffset: number
  /** More output is kept past `nextOffset`. */
  readonly more: boolean
}

export interface JobOutputBuffer {
  readonly add: (chunk: Uint8Array) => void
  /** Every byte the job wrote, kept or not. */
  readonly total: () => number
  /** At most `maxBytes` from `offset` (absolute), never splitting a character. */
  readonly read: (offset: number, maxBytes: number) => JobOutputSlice
}

/**
 * A job's output: the last `kept` bytes, addressed by absolute offsets into
 * all it ever wrote, so a reader that fell behind learns where it resumes.
 */
export const makeJobOutput = (kept: number = JOB_OUTPUT_KEPT): JobOutputBuffer => {
  // Kept chunks are `chunks[first..]`: dropping one moves `first` (no copy per
  // chunk, which a chatty job's thousands of small chunks would make quadratic).
  let chunks: Array<Uint8Array> = []
  let first = 0
  let keptBytes = 0
  let total = 0

  const add = (chunk: Uint8Array) => {
    if (chunk.length === 0) return
    chunks.push(chunk.slice())
    keptBytes += chunk.length
    total += chunk.length
    while (keptBytes > kept) {
      const oldest = chunks[first] ?? new Uint8Array()
      const over = keptBytes - kept
      if (oldest.length <= over) {
        first += 1
        keptBytes -= oldest.length
      } else {
        chunks[first] = oldest.subarray(over)
        keptBytes -= over
      }
    }
    if (first > 1024 && first * 2 > chunks.length) {
      chunks = chunks.slice(first)
      first = 0
    }
  }

  /** The kept bytes from absolute `from` to `to`. */
  const bytesBetween = (from: number, to: number): Uint8Array => {
    const out = new Uint8Array(to - from)
    let at = total - keptBytes
    for (let index = first; index < chunks.length; index++) {
      const chunk = chunks[index] ?? new Uint8Array()
      const start = Math.max(from, at)
      const end = Math.min(to, at + chunk.length)
      if (start < end) out.set(chunk.subarray(start - at, end - at), start - from)
      at += chunk.length
    }
    return out
  }

  const read = (offset: number, maxBytes: number): JobOutputSlice => {
    const firstKept = total - keptBytes
    let start = Math.min(Math.max(offset, firstKept), total)
    // A start inside a character (only where bytes were dropped) moves to the next one.
    if (start === firstKept && start > offset)
      start += utf8ContinuationPrefix(bytesBetween(start, Math.min(total, start + 3)))
    const window = bytesBetween(start, Math.min(total, start + maxBytes))
    let length = utf8CompleteLength(window)
    // A window smaller than one character still returns that character whole.
    if (length === 0 && window.length > 0) {
      const lead = window[0] ?? 0
      length = Math.min(total - start, lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1)
    }
    const bytes = bytesBetween(start, start + length)
    return {
      offset: start,
      text: new TextDecoder("utf-8").decode(bytes),
      nextOffset: start + length,
      more: start + length < total
    }
  }

  return { add, total: () => total, read }
}
