/**
 * One command's output stream carrying two parts: what came before the
 * first line `<mark> <word>` (the mark on a line of its own start, so the
 * stream's part before it ends with a newline of its own), that line's
 * word, and what came after. A command that runs several things in one
 * exec says where one ended this way; the mark is random for each run, so
 * only the command's own script writes it. Each part is bounded as
 * `makeOutputBound` bounds it.
 */
import { type BoundedText, makeOutputBound } from "./OutputBound.ts"

export interface OutputSplit {
  readonly add: (chunk: Uint8Array) => void
  /** The stream ended: what waited for a mark's line to end goes before. */
  readonly end: () => void
  /** The word on the mark's line once that line came whole; undefined until then (or when it never came). */
  readonly word: () => string | undefined
  /** Before the mark's line (all of it when none came, once ended), and after it. */
  readonly before: () => BoundedText
  readonly after: () => BoundedText
}

/** A mark's line longer than this is not one: its bytes go on as the part before. */
const WORD_MAX = 256

const joined = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

const indexOf = (haystack: Uint8Array, needle: Uint8Array, from = 0): number => {
  outer: for (let at = from; at <= haystack.length - needle.length; at++) {
    for (let index = 0; index < needle.length; index++) if (haystack[at + index] !== needle[index]) continue outer
    return at
  }
  return -1
}

/** `onMark`: called once, with the word, as the mark's line completes (a caller that answers on stdin). */
export const splitAtMark = (
  mark: string,
  limits: { readonly before: number; readonly after: number },
  onMark?: (word: string) => void
): OutputSplit => {
  const needle = new TextEncoder().encode(`\n${mark} `)
  const before = makeOutputBound(limits.before)
  const after = makeOutputBound(limits.after)
  // Bytes not yet known to be before the mark: a mark's start, or a mark's line not yet ended.
  let pending = new Uint8Array()
  let word: string | undefined

  const add = (chunk: Uint8Array) => {
    if (word !== undefined) return after.add(chunk)
    const bytes = joined(pending, chunk)
    const at = indexOf(bytes, needle)
    if (at < 0) {
      // A mark may start in the last bytes: they wait for the next chunk.
      const keep = Math.min(bytes.length, needle.length - 1)
      before.add(bytes.subarray(0, bytes.length - keep))
      pending = bytes.slice(bytes.length - keep)
      return
    }
    const end = bytes.indexOf(10, at + needle.length)
    if (end < 0) {
      if (bytes.length - at - needle.length <= WORD_MAX) {
        before.add(bytes.subarray(0, at))
        pending = bytes.slice(at)
        return
      }
      // No line of a mark's: on as before, past this start.
      before.add(bytes.subarray(0, at + needle.length))
      pending = new Uint8Array()
      return add(bytes.slice(at + needle.length))
    }
    // The newline that starts the mark's line ends the part before.
    before.add(bytes.subarray(0, at + 1))
    word = new TextDecoder().decode(bytes.subarray(at + needle.length, end))
    pending = new Uint8Array()
    after.add(bytes.subarray(end + 1))
    onMark?.(word)
  }

  return {
    add,
    end: () => {
      // What waited for a mark's line that never came is the part before.
      if (word === undefined) before.add(pending)
      pending = new Uint8Array()
    },
    word: () => word,
    before: () => before.result(),
    after: () => after.result()
  }
}
