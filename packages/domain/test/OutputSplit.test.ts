import { describe, expect, it } from "vitest"
import { splitAtMark } from "../src/OutputSplit.ts"

const MARK = "m-1f2e"
const bytes = (text: string) => new TextEncoder().encode(text)

const split = (chunks: ReadonlyArray<string>, limits = { before: 1024, after: 1024 }) => {
  const marks: Array<string> = []
  const output = splitAtMark(MARK, limits, (word) => marks.push(word))
  for (const chunk of chunks) output.add(bytes(chunk))
  output.end()
  return { word: output.word(), before: output.before().text, after: output.after().text, marks }
}

/** Every way of cutting `text` into two chunks. */
const cuts = (text: string) => Array.from({ length: text.length + 1 }, (_, at) => [text.slice(0, at), text.slice(at)])

describe("splitAtMark", () => {
  it.each([
    ["one chunk", [`probe\n${MARK} 0\nstep`], "probe\n", "0", "step"],
    ["the mark's line alone", [`\n${MARK} 1\n`], "\n", "1", ""],
    ["chunks cut inside the mark", ["probe\nm-1", `f2e 17\nst`, "ep"], "probe\n", "17", "step"],
    ["the word in its own chunk", [`a\n${MARK} `, "3", "\nb"], "a\n", "3", "b"],
    ["no mark: all before", ["probe output\n", "more"], "probe output\nmore", undefined, ""],
    ["a mark's start with no line's end", [`a\n${MARK} 0`], `a\n${MARK} 0`, undefined, ""],
    ["a mark not at a line's start is text", [`a ${MARK} 0\nb`], `a ${MARK} 0\nb`, undefined, ""],
    ["a mark with no word's space is text", [`a\n${MARK}\nb`], `a\n${MARK}\nb`, undefined, ""],
    ["only the first mark's line splits", [`a\n${MARK} 1\nb\n${MARK} 2\nc`], "a\n", "1", `b\n${MARK} 2\nc`]
  ] as const)("%s", (_name, chunks, before, word, after) => {
    const result = split(chunks)
    expect(result).toEqual({ word, before, after, marks: word === undefined ? [] : [word] })
  })

  it("finds the mark wherever the stream is cut", () => {
    for (const [a, b] of cuts(`x\n${MARK} 42\ny`)) {
      expect(split([a ?? "", b ?? ""])).toEqual({ word: "42", before: "x\n", after: "y", marks: ["42"] })
    }
  })

  it("calls back as the mark's line completes, not before, and once", () => {
    const marks: Array<string> = []
    const output = splitAtMark(MARK, { before: 64, after: 64 }, (word) => marks.push(word))
    output.add(bytes(`env\n${MARK} 0`))
    expect(marks).toEqual([])
    output.add(bytes("\nafter"))
    output.add(bytes(`\n${MARK} 1\n`))
    expect(marks).toEqual(["0"])
  })

  it("a line past a word's length is no mark's: its bytes stay before", () => {
    const long = `a\n${MARK} ${"w".repeat(300)}`
    expect(split([long, "\nb"])).toEqual({ word: undefined, before: `${long}\nb`, after: "", marks: [] })
  })

  it("bounds each part on its own", () => {
    const result = split([`${"p".repeat(40)}\n${MARK} 0\n${"s".repeat(40)}`], { before: 8, after: 8 })
    expect(result.word).toBe("0")
    expect(result.before.startsWith("pppp")).toBe(true)
    expect(result.before).toContain("left out")
    expect(result.after.startsWith("ssss")).toBe(true)
    expect(result.after).toContain("left out")
  })
})
