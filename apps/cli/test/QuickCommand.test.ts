import { describe, expect, it } from "vitest"
import { type QuickCommand, quickCommand } from "../src/QuickCommand.ts"

describe("which argv the fast path answers (QuickCommand)", () => {
  it.each<[ReadonlyArray<string>, QuickCommand | undefined]>([
    [["ls"], { _tag: "ls", all: false, json: false }],
    [["ls", "-a"], { _tag: "ls", all: true, json: false }],
    [["ls", "--all"], { _tag: "ls", all: true, json: false }],
    [["ls", "--json"], { _tag: "ls", all: false, json: true }],
    [["ls", "--json", "-a"], { _tag: "ls", all: true, json: true }],
    [["status", "abc"], { _tag: "status", id: "abc", json: false }],
    [["status", "o/r#3", "--json"], { _tag: "status", id: "o/r#3", json: true }],
    [["status", "--json", "abc"], { _tag: "status", id: "abc", json: true }],
    // Everything else is the full CLI's: other commands, flags, help, usage errors.
    [[], undefined],
    [["--version"], { _tag: "version" }],
    [["--version", "ls"], undefined],
    [["-v"], undefined],
    [["ls", "--help"], undefined],
    [["ls", "-h"], undefined],
    [["ls", "-aj"], undefined],
    [["ls", "--all=true"], undefined],
    [["ls", "-a", "--all"], undefined],
    [["ls", "--json", "--json"], undefined],
    [["ls", "extra"], undefined],
    [["status"], undefined],
    [["status", ""], undefined],
    [["status", "a", "b"], undefined],
    [["status", "abc", "--pr", "3"], undefined],
    [["status", "abc", "-a"], undefined],
    [["status", "--", "abc"], undefined],
    [["--json", "ls"], undefined],
    [["open", "o/r#1"], undefined],
    [["stop", "abc"], undefined]
  ])("%j", (argv, expected) => {
    expect(quickCommand(argv)).toEqual(expected)
  })
})
