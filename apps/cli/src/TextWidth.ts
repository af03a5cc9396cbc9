/**
 * How many terminal columns text takes, and text cut to fit a number of
 * columns, without loading effect (the fast path formats with this): East
 * Asian wide and fullwidth characters and emoji take two columns, combining
 * marks and format characters (joiners, variation selectors) none, anything
 * else one.
 */

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u

// East Asian Wide and Fullwidth (Hangul Jamo, CJK, Hangul syllables, fullwidth forms, the supplementary ideographic planes) and emoji.
const WIDE =
  /^[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{20000}-\u{3FFFD}\p{Emoji_Presentation}]$/u

const columnsOf = (char: string): number => (ZERO_WIDTH.test(char) ? 0 : WIDE.test(char) ? 2 : 1)

export const displayWidth = (text: string): number => {
  let width = 0
  for (const char of text) width += columnsOf(char)
  return width
}

/** `text` whole when it fits in `columns`, else cut to fit with "…" as its last column. */
export const fitWidth = (text: string, columns: number): string => {
  if (displayWidth(text) <= columns) return text
  let width = 0
  let end = 0
  for (const char of text) {
    const next = width + columnsOf(char)
    if (next > columns - 1) break
    width = next
    end += char.length
  }
  return `${text.slice(0, end)}…`
}
