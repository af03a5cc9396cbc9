import type { PortList } from "@prbox/protocol"
import { describe, expect, it } from "vitest"
import { portList, portView } from "../../protocol/test/ports.ts"
import {
  accessOf,
  age,
  displayText,
  markEnded,
  PORTS_HEADER,
  portChanges,
  portName,
  portRows,
  pullRequestStateText,
  pullRequestTitle,
  repoOf
} from "../src/index.ts"

describe("age", () => {
  const now = 1_000_000_000
  const cases: ReadonlyArray<readonly [ms: number, expected: string]> = [
    [0, "0s"],
    [59_999, "59s"],
    [60_000, "1m"],
    [3_599_999, "59m"],
    [3_600_000, "1h"],
    [86_399_999, "23h"],
    [86_400_000, "1d"],
    [10 * 86_400_000, "10d"],
    // A clock that went backwards is "now", never negative.
    [-5_000, "0s"]
  ]
  for (const [ms, expected] of cases) {
    it(`${ms} ms → ${expected}`, () => expect(age(now - ms, now)).toBe(expected))
  }
})

describe("repoOf: the repository as a user types it", () => {
  const cases: ReadonlyArray<readonly [host: string | null, repository: string, expected: string]> = [
    ["github.com", "owner/repo", "owner/repo"],
    [null, "owner/repo", "owner/repo"],
    ["gitlab.example.com", "group/sub/app", "gitlab.example.com/group/sub/app"],
    ["eu-west-1", "my-repo", "eu-west-1/my-repo"],
    ["local", "/tmp/x/remote.git", "remote"],
    ["local", "/srv/git/plain", "plain"],
    ["local", "/", "/"]
  ]
  for (const [host, repository, expected] of cases) {
    it(`${host ?? "(no host)"} ${repository} → ${expected}`, () => expect(repoOf({ host, repository })).toBe(expected))
  }
})

describe("ports: the table's cells and the watch's lines", () => {
  const port = portView
  const list = portList

  it("one row per port: PORT LABEL SOURCE LISTENING ACCESS URL, in the daemon's order", () => {
    expect(PORTS_HEADER).toEqual(["PORT", "LABEL", "SOURCE", "LISTENING", "ACCESS", "URL"])
    const rows = portRows(
      list(port(3000, { label: "web", source: "devcontainer", listening: false }), port(5173, { public: true }))
    )
    expect(rows).toEqual([
      ["3000", "web", "devcontainer", "no", "private", "http://3000.abcdefghijkl.localhost:47000/"],
      ["5173", "-", "discovered", "yes", "public", "http://5173.abcdefghijkl.localhost:47000/"]
    ])
  })

  it("names a port by number and label", () => {
    expect(portName(port(3000, { label: "web" }))).toBe("3000 (web)")
    expect(portName(port(8000))).toBe("8000")
    expect(accessOf({ public: true })).toBe("public")
    expect(accessOf({ public: false })).toBe("private")
  })

  const cases: ReadonlyArray<readonly [name: string, before: PortList, after: PortList, lines: ReadonlyArray<string>]> =
    [
      ["nothing changed", list(port(3000)), list(port(3000)), []],
      [
        "a port appears listening",
        list(),
        list(port(3000, { label: "web" })),
        ["3000 (web) is listening: http://3000.abcdefghijkl.localhost:47000/ (private)"]
      ],
      [
        "a declared port starts listening",
        list(port(3000, { listening: false, source: "config" })),
        list(port(3000, { source: "config", public: true })),
        ["3000 is listening: http://3000.abcdefghijkl.localhost:47000/ (public)"]
      ],
      [
        "a declared port stops listening",
        list(port(3000, { source: "config" })),
        list(port(3000, { listening: false, source: "config" })),
        ["3000 stopped listening"]
      ],
      ["a discovered port goes away", list(port(8000, { label: "api" })), list(), ["8000 (api) stopped listening"]],
      ["a port that never listened is no news", list(), list(port(3000, { listening: false })), []],
      ["only access changed", list(port(3000)), list(port(3000, { public: true })), []],
      [
        "several at once, by port number",
        list(port(9000), port(4000)),
        list(port(5000), port(9000, { listening: false }), port(1000)),
        [
          "1000 is listening: http://1000.abcdefghijkl.localhost:47000/ (private)",
          "4000 stopped listening",
          "5000 is listening: http://5000.abcdefghijkl.localhost:47000/ (private)",
          "9000 stopped listening"
        ]
      ],
      [
        "another Compose service's port is its own, even with the app's number",
        list(port(6379)),
        list(port(6379), port(6379, { service: "db", source: "compose", url: "http://6379.db.x/" }), port(80)),
        [
          "80 is listening: http://80.abcdefghijkl.localhost:47000/ (private)",
          "db:6379 is listening: http://6379.db.x/ (private)"
        ]
      ],
      [
        "a service's port stops listening, the app's of the same number goes on",
        list(port(6379), port(6379, { service: "db", label: "Redis" })),
        list(port(6379), port(6379, { service: "db", label: "Redis", listening: false })),
        ["db:6379 (Redis) stopped listening"]
      ]
    ]
  for (const [name, before, after, lines] of cases) {
    it(`watch: ${name}`, () => expect(portChanges(before, after)).toEqual(lines))
  }
})

describe("what a hosting service wrote, made safe to show", () => {
  const cases: ReadonlyArray<readonly [name: string, text: string, expected: string]> = [
    ["plain text as it is", "Fix the parser (#12)", "Fix the parser (#12)"],
    ["an escape sequence loses its ESC and BEL", "a\u001b[2Jb\u001b]0;x\u0007c", "a [2Jb ]0;x c"],
    ["newlines, tabs and line separators become one space", "one\r\n\ttwo\u2028three", "one two three"],
    ["C1 controls and DEL become spaces", "a\u009bb\u007fc", "a b c"],
    ["bidirectional overrides are dropped", "abc\u202edcba\u202c.ts\u2066x\u2069", "abcdcba.tsx"],
    ["blanks around are trimmed", "  title\n", "title"],
    ["wide text and emoji are kept", "修正 🐛", "修正 🐛"]
  ]
  for (const [name, text, expected] of cases) {
    it(name, () => expect(displayText(text)).toBe(expected))
  }

  it("a title is null when unknown or blank", () => {
    expect(pullRequestTitle({ title: null })).toBeNull()
    expect(pullRequestTitle({ title: " \n\u0007 " })).toBeNull()
    expect(pullRequestTitle({ title: "Fix\nit" })).toBe("Fix it")
  })
})

describe("markEnded: a PR the hosting service said was merged or closed", () => {
  it.each([
    ["merged", "running · merged"],
    ["closed", "running · closed"],
    ["open", "running"],
    [null, "running"]
  ] as const)("%s → %s", (pullRequestState, expected) => {
    expect(markEnded("running", { pullRequestState })).toBe(expected)
  })
})

describe("pullRequestStateText: the PR's state, and since when it is over", () => {
  const now = 10 * 3_600_000
  it.each([
    ["open", null, "open"],
    ["merged", now - 3 * 3_600_000, "merged (first seen 3h ago)"],
    ["closed", now - 90_000, "closed (first seen 1m ago)"],
    [null, null, null]
  ] as const)("%s, first seen closed at %s → %s", (pullRequestState, closedSeenAt, expected) => {
    expect(pullRequestStateText({ pullRequestState, closedSeenAt }, now)).toBe(expected)
  })
})
