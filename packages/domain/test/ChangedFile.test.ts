import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseNameStatus } from "../src/ChangedFile.ts"

describe("parseNameStatus", () => {
  it.each([
    ["nothing changed", "", Result.succeed([])],
    [
      "added and modified",
      "A\0new.txt\0M\0src/a.ts\0",
      Result.succeed([
        { path: "new.txt", change: "added" },
        { path: "src/a.ts", change: "modified" }
      ])
    ],
    [
      "deleted and a type change",
      "D\0gone\0T\0link\0",
      Result.succeed([
        { path: "gone", change: "deleted" },
        { path: "link", change: "type-changed" }
      ])
    ],
    [
      "a rename with its score",
      "R087\0old name.md\0docs/new name.md\0",
      Result.succeed([{ path: "docs/new name.md", change: "renamed", previousPath: "old name.md" }])
    ],
    [
      "a copy",
      "C100\0a\0b\0M\0c\0",
      Result.succeed([
        { path: "b", change: "copied", previousPath: "a" },
        { path: "c", change: "modified" }
      ])
    ],
    ["a path with a newline and a tab", "M\0a\nb\tc\0", Result.succeed([{ path: "a\nb\tc", change: "modified" }])],
    ["no final NUL", "M\0a", Result.succeed([{ path: "a", change: "modified" }])],
    ["an unmerged entry", "U\0a\0", Result.fail('unknown change status "U"')],
    ["a rename cut short", "R100\0a\0", Result.fail("an entry is cut short")],
    ["a status without a path", "M\0", Result.fail("an entry is cut short")],
    ["an empty path", "M\0\0", Result.fail("an entry is cut short")]
  ] as const)("%s", (_name, output, expected) => {
    expect(parseNameStatus(output)).toEqual(expected)
  })
})
