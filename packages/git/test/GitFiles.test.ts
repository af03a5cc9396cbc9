import { deflateSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { fetchHeadEntry, looseObjectType, movePackedBranches } from "../src/GitFiles.ts"

const A = "a".repeat(40)
const B = "b".repeat(40)
const C = "c".repeat(64)
const HEADER = "# pack-refs with: peeled fully-peeled sorted "

describe("a clone's packed-refs, its branches moved under a prefix", () => {
  it.each([
    ["one branch", `${HEADER}\n${A} refs/heads/main\n`, `${HEADER}\n${A} refs/prbox/base/main\n`, ["main"]],
    ["no header", `${A} refs/heads/main\n`, `${A} refs/prbox/base/main\n`, ["main"]],
    ["only the header (an empty clone)", `${HEADER}\n`, `${HEADER}\n`, []],
    [
      "re-sorted among other refs, a peeled line kept with its ref",
      `${HEADER}\n${A} refs/heads/z\n^${B}\n${B} refs/pull/1/head\n${C} refs/tags/v1\n`,
      `${HEADER}\n${A} refs/prbox/base/z\n^${B}\n${B} refs/pull/1/head\n${C} refs/tags/v1\n`,
      ["z"]
    ],
    [
      "sorted as bytes",
      `${A} refs/heads/é\n${B} refs/heads/z\n`,
      `${B} refs/prbox/base/z\n${A} refs/prbox/base/é\n`,
      ["é", "z"]
    ]
  ])("%s", (_name, text, packedRefs, branches) => {
    expect(movePackedBranches(text, "refs/prbox/base/")).toEqual({ packedRefs, branches })
  })

  it.each([
    ["no final newline", `${A} refs/heads/main`],
    ["a short object id", `${"a".repeat(39)} refs/heads/main\n`],
    ["a name outside refs/", `${A} HEAD\n`],
    ["a space in a name", `${A} refs/heads/a b\n`],
    ["a peeled line first", `^${A}\n`],
    ["two peeled lines", `${A} refs/tags/v1\n^${B}\n^${B}\n`],
    ["a header not first", `${A} refs/heads/main\n${HEADER}\n`]
  ])("refused: %s", (_name, text) => {
    expect(movePackedBranches(text, "refs/prbox/base/")).toBeUndefined()
  })
})

describe("FETCH_HEAD of a one-refspec fetch", () => {
  it.each([
    ["a commit", `${A}\t\t'refs/pull/1/head' of /r.git\n`, { oid: A, forMerge: true }],
    ["a SHA-256 id", `${C}\t\t'refs/pull/1/head' of /r.git\n`, { oid: C, forMerge: true }],
    ["no commit in it", `${A}\tnot-for-merge\t'refs/pull/1/head' of /r.git\n`, { oid: A, forMerge: false }]
  ])("%s", (_name, text, entry) => {
    expect(fetchHeadEntry(text)).toEqual(entry)
  })

  it.each([
    ["empty", ""],
    ["two lines", `${A}\t\tx\n${B}\t\ty\n`],
    ["no final newline", `${A}\t\tx`],
    ["a short id", `${"a".repeat(39)}\t\tx\n`],
    ["a 41-character id", `${"a".repeat(41)}\t\tx\n`],
    ["upper case", `${A.toUpperCase()}\t\tx\n`],
    ["another marker", `${A}\tfor-merge\tx\n`]
  ])("refused: %s", (_name, text) => {
    expect(fetchHeadEntry(text)).toBeUndefined()
  })
})

describe("a loose object's type", () => {
  const loose = (type: string, body: string) => deflateSync(Buffer.from(`${type} ${body.length}\0${body}`))

  it.each(["commit", "tree", "blob", "tag"])("%s", (type) => {
    expect(looseObjectType(loose(type, "x".repeat(100)))).toBe(type)
  })

  it("from the start of a truncated object", () => {
    expect(looseObjectType(loose("commit", "tree 0123\n".repeat(50)).subarray(0, 40))).toBe("commit")
  })

  it.each([
    ["not deflated", Buffer.from("commit 3\0abc")],
    ["an unknown type", deflateSync(Buffer.from("commits 3\0abc"))],
    ["no size", deflateSync(Buffer.from("commit \0abc"))]
  ])("unknown: %s", (_name, bytes) => {
    expect(looseObjectType(bytes)).toBeUndefined()
  })
})
