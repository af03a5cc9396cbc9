import { utf8CompleteLength } from "./OutputBound.ts"

/**
 * The decisions of a workspace file's read and edit that need no file
 * system: which occurrence of a search string an edit replaces, and where a
 * bounded text is cut so the caller can continue from the next line.
 */

export type EditDecision =
  | {
      readonly _tag: "Replaced"
      readonly text: string
      /** The occurrence replaced (1-based), of how many there were. */
      readonly occurrence: number
      readonly occurrences: number
    }
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Ambiguous"; readonly occurrences: number }
  | { readonly _tag: "OutOfRange"; readonly occurrence: number; readonly occurrences: number }

/** Where `search` starts in `text`, every time (non-overlapping, left to right). */
const occurrencesOf = (text: string, search: string): ReadonlyArray<number> => {
  const found: Array<number> = []
  for (let at = text.indexOf(search); at >= 0; at = text.indexOf(search, at + search.length)) found.push(at)
  return found
}

/**
 * Replaces the only occurrence of `search`, or the `occurrence`-th (1-based)
 * when given; several without `occurrence` is ambiguous, never a guess.
 */
export const replaceOccurrence = (
  text: string,
  search: string,
  replace: string,
  occurrence?: number
): EditDecision => {
  if (search.length === 0) return { _tag: "Absent" }
  const found = occurrencesOf(text, search)
  if (found.length === 0) return { _tag: "Absent" }
  if (occurrence === undefined && found.length > 1) return { _tag: "Ambiguous", occurrences: found.length }
  const chosen = occurrence ?? 1
  const at = found[chosen - 1]
  if (at === undefined || chosen < 1) return { _tag: "OutOfRange", occurrence: chosen, occurrences: found.length }
  return {
    _tag: "Replaced",
    text: text.slice(0, at) + replace + text.slice(at + search.length),
    occurrence: chosen,
    occurrences: found.length
  }
}

export interface CutText {
  readonly text: string
  readonly truncated: boolean
  /** Lines `text` holds, a cut last line counted. */
  readonly lines: number
}

const NEWLINE = 0x0a

const lineCount = (text: string): number => {
  if (text.length === 0) return 0
  let count = 0
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) count += 1
  return text.endsWith("\n") ? count : count + 1
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes: after its last whole line
 * when it has one (so reading on from the next line loses nothing), else at
 * a character boundary. Never splits a character.
 */
export const boundText = (text: string, maxBytes: number): CutText => {
  const bytes = new TextEncoder().encode(text)
  if (bytes.length <= maxBytes) return { text, truncated: false, lines: lineCount(text) }
  const head = bytes.subarray(0, maxBytes)
  const lastNewline = head.lastIndexOf(NEWLINE)
  const kept = head.subarray(0, lastNewline >= 0 ? lastNewline + 1 : utf8CompleteLength(head))
  const cut = new TextDecoder().decode(kept)
  return { text: cut, truncated: true, lines: lineCount(cut) }
}
