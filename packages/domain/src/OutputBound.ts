/**
 * Bounded command output: the head and the tail of a byte stream, whatever
 * its length, with one marker line where bytes were left out. An agent
 * reading a failed build wants both the first error and the summary at the
 * end. Cuts fall on UTF-8 character boundaries, so no character is split.
 */

/** The length of the longest prefix of `bytes` that ends on a character boundary. */
export const utf8CompleteLength = (bytes: Uint8Array): number => {
  // A sequence started in the last 3 bytes that is not complete is left out.
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0
    if ((byte & 0xc0) === 0x80) continue // continuation byte: look further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return needed > back ? bytes.length - back : bytes.length
  }
  return bytes.length
}

/** How many leading continuation bytes `bytes` starts with (the end of a character cut before it). */
export const utf8ContinuationPrefix = (bytes: Uint8Array): number => {
  let index = 0
  while (index < Math.min(3, bytes.length) && ((bytes[index] ?? 0) & 0xc0) === 0x80) index++
  return index
}

export const leftOutMarker = (bytes: number): string => `\n[... ${bytes} bytes left out ...]\n`

export interface BoundedText {
  readonly text: string
  readonly truncated: boolean
  /** Every byte the stream carried, kept or not. */
  readonly totalBytes: number
}

export interface OutputBound {
  readonly add: (chunk: Uint8Array) => void
  /** The head and tail kept (each at most half of `limit`), joined by the marker when bytes were left out. */
  readonly result: () => BoundedText
}

const concat = (chunks: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.length, 0))
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.length
  }
  return out
}

/** Collects a stream keeping at most `limit` bytes of it: the first half and the last half. */
export const makeOutputBound = (limit: number): OutputBound => {
  const headLimit = Math.ceil(limit / 2)
  const tailLimit = limit - headLimit
  const head: Array<Uint8Array> = []
  let headSize = 0
  let tail: Array<Uint8Array> = []
  let tailSize = 0
  let total = 0
  const decoder = () => new TextDecoder("utf-8")

  const add = (chunk: Uint8Array) => {
    total += chunk.length
    const toHead = Math.min(chunk.length, headLimit - headSize)
    // Copies: a view would keep the whole chunk it came in (a 64 KiB read for a byte of output).
    if (toHead > 0) {
      head.push(new Uint8Array(chunk.subarray(0, toHead)))
      headSize += toHead
    }
    const rest = chunk.subarray(toHead)
    if (rest.length === 0 || tailLimit === 0) return
    if (rest.length >= tailLimit) {
      tail = [new Uint8Array(rest.subarray(rest.length - tailLimit))]
      tailSize = tailLimit
      return
    }
    tail.push(new Uint8Array(rest))
    tailSize += rest.length
    // Drop whole chunks from the front, then trim the first one, to stay within the tail's half.
    while (tailSize > tailLimit) {
      const first = tail[0] ?? new Uint8Array()
      const over = tailSize - tailLimit
      if (first.length <= over) {
        tail = tail.slice(1)
        tailSize -= first.length
      } else {
        tail[0] = first.subarray(over)
        tailSize -= over
      }
    }
  }

  const result = (): BoundedText => {
    const headBytes = concat(head)
    const tailBytes = concat(tail)
    if (total === headBytes.length + tailBytes.length) {
      return { text: decoder().decode(concat([headBytes, tailBytes])), truncated: false, totalBytes: total }
    }
    const headKept = headBytes.subarray(0, utf8CompleteLength(headBytes))
    const tailKept = tailBytes.subarray(utf8ContinuationPrefix(tailBytes))
    const leftOut = total - headKept.length - tailKept.length
    return {
      text: decoder().decode(headKept) + leftOutMarker(leftOut) + decoder().decode(tailKept),
      truncated: true,
      totalBytes: total
    }
  }

  return { add, result }
}
