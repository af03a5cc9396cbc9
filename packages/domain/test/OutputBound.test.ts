import { describe, expect, it } from "vitest"
import { leftOutMarker, makeOutputBound, utf8CompleteLength, utf8ContinuationPrefix } from "../src/OutputBound.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

const collect = (limit: number, chunks: ReadonlyArray<string | Uint8Array>) => {
  const bound = makeOutputBound(limit)
  for (const chunk of chunks) bound.add(typeof chunk === "string" ? bytes(chunk) : chunk)
  return bound.result()
}

describe("makeOutputBound", () => {
  it.each([
    ["under the bound", 10, ["abc"], "abc", false],
    ["at the bound", 6, ["abcdef"], "abcdef", false],
    ["at the bound in chunks", 6, ["ab", "cd", "ef"], "abcdef", false],
    ["empty", 4, [], "", false],
    ["over: head and tail", 6, ["abcdefghij"], `abc${leftOutMarker(4)}hij`, true],
    ["over in many chunks", 6, ["ab", "cd", "ef", "gh", "ij"], `abc${leftOutMarker(4)}hij`, true],
    ["over by one", 4, ["abcde"], `ab${leftOutMarker(1)}de`, true],
    ["a tail chunk longer than the tail", 4, ["a", "bcdefgh"], `ab${leftOutMarker(4)}gh`, true],
    ["odd limit: the head gets the extra byte", 5, ["0123456789"], `012${leftOutMarker(5)}89`, true]
  ] as const)("%s", (_name, limit, chunks, text, truncated) => {
    const result = collect(limit, chunks)
    expect(result.text).toBe(text)
    expect(result.truncated).toBe(truncated)
    expect(result.totalBytes).toBe(chunks.reduce((size, chunk) => size + bytes(chunk).length, 0))
  })

  it("keeps copies: the chunks it was given may be reused or refilled afterwards (a view would keep each whole read alive)", () => {
    const bound = makeOutputBound(6)
    const reads = [bytes("abcdefgh"), bytes("ij"), bytes("kl")]
    for (const read of reads) bound.add(read)
    for (const read of reads) read.fill(0x2a)
    expect(bound.result().text).toBe(`abc${leftOutMarker(6)}jkl`)
  })

  it("never splits a character at either cut", () => {
    // "é" is 2 bytes, "€" is 3: the head's cut falls inside the first "€", the tail's inside "é".
    const result = collect(8, ["ab€cd", "é€"])
    expect(result.text).toBe(`ab${leftOutMarker(7)}€`)
    const other = collect(10, ["€€€", "ééé"])
    expect(other.text).toBe(`€${leftOutMarker(8)}éé`)
  })

  it("keeps a character split across chunks when nothing is left out", () => {
    const euro = bytes("€")
    expect(collect(16, [euro.subarray(0, 1), euro.subarray(1)]).text).toBe("€")
  })
})

describe("UTF-8 boundaries", () => {
  it.each([
    ["ascii", bytes("abc"), 3],
    ["complete 3-byte", bytes("a€"), 4],
    ["cut 3-byte after 1", bytes("a€").subarray(0, 2), 1],
    ["cut 3-byte after 2", bytes("a€").subarray(0, 3), 1],
    ["complete 4-byte", bytes("😀"), 4],
    ["cut 4-byte after 3", bytes("😀").subarray(0, 3), 0],
    ["empty", new Uint8Array(), 0]
  ])("complete length of %s", (_name, input, length) => {
    expect(utf8CompleteLength(input)).toBe(length)
  })

  it.each([
    ["ascii", bytes("abc"), 0],
    ["tail of €", bytes("€").subarray(1), 2],
    ["tail of 😀", bytes("😀").subarray(1), 3]
  ])("continuation prefix of %s", (_name, input, length) => {
    expect(utf8ContinuationPrefix(input)).toBe(length)
  })
})
