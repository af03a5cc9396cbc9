import { describe, expect, it } from "vitest"
import { boundText, replaceOccurrence } from "../src/TextEdit.ts"

describe("replaceOccurrence", () => {
  it.each([
    ["the only one", "a b c", "b", "X", undefined, { _tag: "Replaced", text: "a X c", occurrence: 1, occurrences: 1 }],
    ["the second of three", "x-x-x", "x", "y", 2, { _tag: "Replaced", text: "x-y-x", occurrence: 2, occurrences: 3 }],
    ["the last", "x-x-x", "x", "", 3, { _tag: "Replaced", text: "x-x-", occurrence: 3, occurrences: 3 }],
    ["occurrence 1 of one", "ab", "b", "c", 1, { _tag: "Replaced", text: "ac", occurrence: 1, occurrences: 1 }],
    ["non-overlapping", "aaaa", "aa", "b", 2, { _tag: "Replaced", text: "aab", occurrence: 2, occurrences: 2 }],
    ["absent", "abc", "z", "y", undefined, { _tag: "Absent" }],
    ["an empty search", "abc", "", "y", undefined, { _tag: "Absent" }],
    ["several without an occurrence", "x-x", "x", "y", undefined, { _tag: "Ambiguous", occurrences: 2 }],
    ["past the last", "x-x", "x", "y", 3, { _tag: "OutOfRange", occurrence: 3, occurrences: 2 }],
    ["zero", "x", "x", "y", 0, { _tag: "OutOfRange", occurrence: 0, occurrences: 1 }]
  ] as const)("%s", (_name, text, search, replace, occurrence, expected) => {
    expect(replaceOccurrence(text, search, replace, occurrence)).toEqual(expected)
  })
})

describe("boundText", () => {
  it.each([
    ["under the bound", "a\nb\n", 10, { text: "a\nb\n", truncated: false, lines: 2 }],
    ["at the bound", "a\nb\n", 4, { text: "a\nb\n", truncated: false, lines: 2 }],
    ["no final newline", "a\nb", 10, { text: "a\nb", truncated: false, lines: 2 }],
    ["empty", "", 10, { text: "", truncated: false, lines: 0 }],
    ["over: after the last whole line", "ab\ncd\nef\n", 7, { text: "ab\ncd\n", truncated: true, lines: 2 }],
    ["one long line: at the bound", "abcdef", 4, { text: "abcd", truncated: true, lines: 1 }],
    ["never in a character (3 bytes)", "ab€", 4, { text: "ab", truncated: true, lines: 1 }],
    ["a whole character at the bound", "ab€x", 5, { text: "ab€", truncated: true, lines: 1 }],
    ["never in a character (4 bytes)", "😀😀", 6, { text: "😀", truncated: true, lines: 1 }],
    ["a character before the first byte", "€", 2, { text: "", truncated: true, lines: 0 }]
  ] as const)("%s", (_name, text, maxBytes, expected) => {
    expect(boundText(text, maxBytes)).toEqual(expected)
  })
})
