import { describe, expect, it } from "vitest"
import { makeJobOutput } from "../src/JobOutput.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

const buffer = (kept: number, chunks: ReadonlyArray<string>) => {
  const output = makeJobOutput(kept)
  for (const chunk of chunks) output.add(bytes(chunk))
  return output
}

describe("makeJobOutput", () => {
  it.each([
    ["from the start", 100, ["abc", "def"], 0, 100, { offset: 0, text: "abcdef", nextOffset: 6, more: false }],
    ["a first chunk", 100, ["abcdef"], 0, 2, { offset: 0, text: "ab", nextOffset: 2, more: true }],
    ["across chunks", 100, ["abc", "def"], 2, 3, { offset: 2, text: "cde", nextOffset: 5, more: true }],
    ["at the end", 100, ["abc"], 3, 10, { offset: 3, text: "", nextOffset: 3, more: false }],
    ["past the end", 100, ["abc"], 9, 10, { offset: 3, text: "", nextOffset: 3, more: false }],
    [
      "dropped bytes: resumes at the first kept",
      4,
      ["abc", "def"],
      0,
      10,
      { offset: 2, text: "cdef", nextOffset: 6, more: false }
    ],
    ["a cut before a character", 100, ["a€b"], 0, 3, { offset: 0, text: "a", nextOffset: 1, more: true }],
    ["a window smaller than a character", 100, ["€b"], 0, 1, { offset: 0, text: "€", nextOffset: 3, more: true }],
    ["dropped inside a character", 3, ["a€b"], 0, 10, { offset: 4, text: "b", nextOffset: 5, more: false }]
  ] as const)("%s", (_name, kept, chunks, offset, maxBytes, slice) => {
    expect(buffer(kept, chunks).read(offset, maxBytes)).toEqual(slice)
  })

  it("keeps the last bytes of thousands of one-byte chunks, by their absolute offsets", () => {
    const letters = Array.from({ length: 5000 }, (_, index) => String.fromCharCode(97 + (index % 26)))
    const output = buffer(100, letters)
    const all = letters.join("")
    expect(output.total()).toBe(5000)
    expect(output.read(0, 1000)).toEqual({ offset: 4900, text: all.slice(4900), nextOffset: 5000, more: false })
    expect(output.read(4950, 10)).toEqual({ offset: 4950, text: all.slice(4950, 4960), nextOffset: 4960, more: true })
  })

  it("reads the whole output back in chunks, byte for byte", () => {
    const output = buffer(1000, ["één", "€€", "😀x"])
    let offset = 0
    let text = ""
    for (;;) {
      const slice = output.read(offset, 4)
      text += slice.text
      offset = slice.nextOffset
      if (!slice.more) break
    }
    expect(text).toBe("één€€😀x")
    expect(output.total()).toBe(bytes("één€€😀x").length)
  })
})
