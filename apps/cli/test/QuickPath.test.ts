import { chmodSync, mkdirSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { API_HEADER } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeV1Database } from "../../../packages/engine/test/legacy-fixtures.ts"
import { writePullRequestFields } from "../../../packages/store/test/pull-request-rows.ts"
import { quickAnswer } from "../src/QuickAnswer.ts"
import { quickCommand } from "../src/QuickCommand.ts"
import { bodyOf } from "../src/QuickSocket.ts"
import { displayWidth } from "../src/TextWidth.ts"
import {
  CLI_MAIN,
  FULL_CLI,
  FULL_CLI_PROBE,
  makeHome,
  prbox,
  removeHome,
  runEntry,
  runOnTerminal,
  seedEndedRows,
  socketOf,
  tearDown
} from "./support.ts"

/**
 * The fast path (QuickAnswer.ts) against a real daemon over its socket: it
 * prints what the full CLI prints, and hands over whenever it cannot answer.
 */

const rows = Array.from({ length: 40 }, (_, index) => [`quick${String(index).padStart(7, "0")}`, index + 1] as const)
const legacyId = "legacy000001"
const longTitle = "Accept trailing commas in every list the grammar has, and say where a list ends too early"
/** What the hosting service said of a few rows' PRs: a long title, a merged PR, a hostile title, a wide one. */
const pullRequests = [
  ["quick0000001", { title: longTitle, author: "octocat", pullRequestState: "open", baseRef: "main" }],
  ["quick0000002", { title: "Drop the v1 API", author: "hubot", pullRequestState: "merged", closedSeenAt: 5_000 }],
  ["quick0000003", { title: "Fix\u001b]0;owned\u0007 the\nparser\u202e", pullRequestState: "closed" }],
  ["quick0000004", { title: "修正: 構文解析器の末尾カンマを受け付ける 🐛 (wide characters take two columns each)" }]
] as const
let home: string

const quick = (args: ReadonlyArray<string>, socketPath = socketOf(home)) => {
  const command = quickCommand(args)
  if (command === undefined || (command._tag !== "ls" && command._tag !== "status"))
    throw new Error(`not a fast path command: ${args.join(" ")}`)
  return quickAnswer(command, { socketPath, cwd: process.cwd(), now: Date.now(), columns: undefined })
}

beforeAll(async () => {
  home = makeHome("cli-quick")
  // A legacy row (always listed, with a warning) beside ended rows of github.com/o/r.
  writeV1Database(home, [
    {
      id: legacyId,
      repository: "/nowhere/remote.git",
      pullRequest: 99,
      password: null,
      status: "stopped",
      containerId: null
    }
  ])
  chmodSync(join(home, "prbox.db"), 0o600)
  await seedEndedRows(home, rows)
  for (const [id, fields] of pullRequests) {
    writePullRequestFields(home, id, {
      author: null,
      pullRequestState: null,
      baseRef: null,
      closedSeenAt: null,
      ...fields
    })
  }
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(home)
})

describe("prbox ls and status on the fast path", () => {
  it.each([
    [["ls"]],
    [["ls", "-a"]],
    [["ls", "--all"]],
    [["ls", "--json"]],
    [["ls", "-a", "--json"]],
    [["status", "quick0000001"]],
    [["status", "quick0000002"]],
    [["status", "quick0000003"]],
    [["status", "quick0000012", "--json"]],
    [["status", "legacy"]],
    [["status", "o/r#7"]],
    [["status", legacyId]]
  ])("%j: the same stdout and exit code as the full CLI, without loading it", async (args) => {
    const full = await runEntry(FULL_CLI, home, args)
    expect(full.code, full.stderr).toBe(0)
    expect(await quick(args)).toBe(full.stdout)
    const whole = await prbox(home, args, { NODE_OPTIONS: FULL_CLI_PROBE })
    expect(whole).toEqual({ code: 0, stdout: full.stdout, stderr: "" })
  })

  it("shows the titles and states the rows keep, whole when stdout is not a terminal", async () => {
    const table = (await quick(["ls", "-a"])) ?? ""
    expect(table.split("\n")[0]).toMatch(/ URL +TITLE$/)
    expect(table).toMatch(/\nquick0000001 .* error {2}.* {2}Accept trailing commas .* ends too early\n/)
    expect(table).toMatch(/\nquick0000002 .* error · merged .* {2}Drop the v1 API\n/)
    expect(table).toMatch(/\nquick0000003 .* error · closed .* {2}Fix \]0;owned the parser\n/)
    expect(table).toMatch(/\nquick0000005 .* {2}—\n/)
    const status = (await quick(["status", "quick0000002"])) ?? ""
    expect(status).toMatch(/\ntitle: +Drop the v1 API\nauthor: +hubot\nPR state: +merged \(first seen \d+d ago\)\n/)
    const json = JSON.parse((await quick(["status", "quick0000001", "--json"])) ?? "{}")
    expect(json).toMatchObject({
      title: longTitle,
      author: "octocat",
      pullRequestState: "open",
      baseRef: "main",
      closedSeenAt: null
    })
  })

  it("on a terminal: the same table from both paths, the titles cut to its width", async () => {
    const full = await runOnTerminal(FULL_CLI, home, ["ls", "-a"], 100)
    expect(full.code, full.stdout).toBe(0)
    // The probe would print on the terminal too: the same text means the fast path answered alone.
    const fast = await runOnTerminal(CLI_MAIN, home, ["ls", "-a"], 100, { NODE_OPTIONS: FULL_CLI_PROBE })
    expect(fast).toEqual(full)
    const lines = full.stdout.split("\n").filter((line) => /^(ID|quick|legacy)/.test(line))
    expect(lines).toHaveLength(rows.length + 2)
    for (const line of lines) expect(displayWidth(line), line).toBeLessThanOrEqual(100)
    for (const id of ["quick0000001", "quick0000004"]) {
      const line = lines.find((candidate) => candidate.startsWith(id)) ?? ""
      expect(line).toMatch(/ {2}(Accept trailing commas|修正: 構文解析器).*…$/)
      expect([99, 100], line).toContain(displayWidth(line))
    }
  })

  it("--version: the full CLI's line, without loading it", async () => {
    const full = await runEntry(FULL_CLI, home, ["--version"])
    expect(full).toMatchObject({ code: 0, stdout: expect.stringMatching(/^prbox v\d+\.\d+\.\d+\n$/) })
    expect(await prbox(home, ["--version"], { NODE_OPTIONS: FULL_CLI_PROBE })).toEqual({ ...full, stderr: "" })
  })

  it("lists every row: the table has the legacy row and its warning, the JSON every row", async () => {
    const table = await quick(["ls", "-a"])
    expect(table?.split("\n").filter((line) => line.startsWith("quick")).length).toBe(rows.length)
    expect(await quick(["ls"])).toContain(
      `warning: legacy sandbox without a password: delete it with \`prbox rm ${legacyId}\``
    )
    expect(JSON.parse((await quick(["ls", "-a", "--json"])) ?? "[]")).toHaveLength(rows.length + 1)
  })

  it.each([[["status", "nosuchsandbox"]], [["status", "nosuchsandbox", "--json"]], [["status", "quick"]]])(
    "%j (not found, ambiguous): handed to the full CLI, which says why with its exit code",
    async (args) => {
      expect(await quick(args)).toBeUndefined()
      const full = await runEntry(FULL_CLI, home, args)
      expect(full.code).not.toBe(0)
      const whole = await prbox(home, args, { NODE_OPTIONS: FULL_CLI_PROBE })
      expect(whole).toEqual({ ...full, stderr: `full CLI loaded\n${full.stderr}` })
    }
  )
})

describe("without a daemon that answers, the fast path hands over", () => {
  it("no socket: nothing printed, and the full CLI starts the daemon and lists", async () => {
    const empty = makeHome("cli-quick-none")
    try {
      expect(await quick(["ls"], socketOf(empty))).toBeUndefined()
      const run = await prbox(empty, ["ls"], { NODE_OPTIONS: FULL_CLI_PROBE })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toMatch(/^full CLI loaded\nprbox: prboxd was not running; started it \(pid \d+/)
      expect(run.stdout).toBe("no active sandboxes (prbox ls -a shows all)\n")
    } finally {
      await tearDown(empty)
    }
  })

  describe("a server on the socket whose answers are not the API's", () => {
    let server: Server
    let answer: { status: number; type: string; body: string; api: string | undefined }
    let socketPath: string
    let dir: string

    beforeAll(async () => {
      dir = makeHome("cli-quick-fake")
      mkdirSync(join(dir, "run"), { recursive: true })
      socketPath = socketOf(dir)
      server = createServer((_req, res) => {
        const { status, type, body, api } = answer
        res
          .writeHead(status, {
            "content-type": type,
            "content-length": Buffer.byteLength(body),
            ...(api === undefined ? {} : { [API_HEADER]: api })
          })
          .end(body)
      })
      await new Promise<void>((resolve) => server.listen(socketPath, resolve))
    })

    afterAll(async () => {
      await new Promise((resolve) => server.close(resolve))
      removeHome(dir)
    })

    const list = { status: 200, type: "application/json", body: "[]", api: "1" }
    it.each([
      ["a well-formed list", list, "no active sandboxes (prbox ls -a shows all)\n"],
      [
        "a daemon that serves this generation among others",
        { ...list, api: "2, 1" },
        "no active sandboxes (prbox ls -a shows all)\n"
      ],
      ["a daemon of another API generation", { ...list, api: "2" }, undefined],
      ["a daemon that does not say its API generation", { ...list, api: undefined }, undefined],
      ["a row without its status", { ...list, body: JSON.stringify([{ id: "abcdefghij12" }]) }, undefined],
      ["an object for a list", { ...list, body: "{}" }, undefined],
      ["text that is not JSON", { ...list, body: "[" }, undefined],
      ["another content type", { ...list, type: "text/plain" }, undefined],
      ["a server error", { ...list, status: 500 }, undefined]
    ])("%s", async (_, given, expected) => {
      answer = given
      expect(await quick(["ls"], socketPath)).toBe(expected)
    })
  })
})

describe("reading the daemon's HTTP/1.0 answer (bodyOf)", () => {
  const answer = (head: string, body: string) => Buffer.from(`${head}\r\n\r\n${body}`)
  const json = "HTTP/1.1 200 OK\r\nprbox-api: 1\r\ncontent-type: application/json"
  it.each([
    ["a whole 200 JSON answer", answer(`${json}\r\ncontent-length: 2`, "[]"), "[]"],
    [
      "headers in another case",
      answer("HTTP/1.0 200 OK\r\nPrbox-Api: 1\r\nContent-Type: application/json\r\nContent-Length: 2", "[]"),
      "[]"
    ],
    ["UTF-8 counted in bytes", answer(`${json}\r\ncontent-length: 4`, '"é"'), '"é"'],
    ["cut short of its length", answer(`${json}\r\ncontent-length: 3`, "[]"), undefined],
    ["without a length", answer(json, "[]"), undefined],
    ["chunked", answer(`${json}\r\ntransfer-encoding: chunked\r\ncontent-length: 7`, "2\r\n[]\r\n"), undefined],
    [
      "another status",
      answer("HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2", "{}"),
      undefined
    ],
    ["another type", answer("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2", "[]"), undefined],
    ["no end of headers", Buffer.from(`${json}\r\ncontent-length: 2\r\n[]`), undefined],
    [
      "without the API header",
      answer("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2", "[]"),
      undefined
    ],
    [
      "another API generation",
      answer("HTTP/1.1 200 OK\r\nprbox-api: 2,11\r\ncontent-type: application/json\r\ncontent-length: 2", "[]"),
      undefined
    ],
    [
      "this generation among others",
      answer("HTTP/1.1 200 OK\r\nprbox-api: 2, 1\r\ncontent-type: application/json\r\ncontent-length: 2", "[]"),
      "[]"
    ]
  ])("%s", (_, bytes, expected) => {
    expect(bodyOf(bytes)).toBe(expected)
  })
})
