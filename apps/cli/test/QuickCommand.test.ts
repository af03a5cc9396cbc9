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
    // open: one input, `--pr N` as two words, --json, --no-wait; any other form is the full CLI's.
    [["open", "o/r#1"], { _tag: "open", input: "o/r#1", pr: undefined, json: false, wait: true }],
    [["open", "/src/repo", "--pr", "3"], { _tag: "open", input: "/src/repo", pr: 3, json: false, wait: true }],
    [["open", "--pr", "12", "."], { _tag: "open", input: ".", pr: 12, json: false, wait: true }],
    [
      ["open", "--json", "o/r#1", "--no-wait"],
      { _tag: "open", input: "o/r#1", pr: undefined, json: true, wait: false }
    ],
    [["open"], undefined],
    [["open", " "], undefined],
    [["open", "a", "b"], undefined],
    [["open", "o/r#1", "--pr"], undefined],
    [["open", ".", "--pr", "0"], undefined],
    [["open", ".", "--pr", "03"], undefined],
    [["open", ".", "--pr", "-3"], undefined],
    [["open", ".", "--pr=3"], undefined],
    [["open", ".", "--pr", "3", "--pr", "4"], undefined],
    [["open", "o/r#1", "--json", "--json"], undefined],
    [["open", "o/r#1", "--wait"], undefined],
    [["open", "o/r#1", "--browser"], undefined],
    [["open", "o/r#1", "--ref", "main"], undefined],
    [["open", "o/r#1", "--devcontainer", "py"], undefined],
    [["open", "o/r#1", "--help"], undefined],
    [["open", "--", "o/r#1"], undefined],
    // ssh-proxy: OpenSSH's %h, alone.
    [["ssh-proxy", "abcdefghijkl.prbox"], { _tag: "ssh-proxy", host: "abcdefghijkl.prbox" }],
    [["ssh-proxy"], undefined],
    [["ssh-proxy", "--help"], undefined],
    [["ssh-proxy", "a.prbox", "b.prbox"], undefined],
    [["stop", "abc"], undefined]
  ])("%j", (argv, expected) => {
    expect(quickCommand(argv)).toEqual(expected)
  })
})
