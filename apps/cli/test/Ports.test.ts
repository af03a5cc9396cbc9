import { existsSync } from "node:fs"
import { join } from "node:path"
import type { PortList } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { portView } from "../../../packages/protocol/test/ports.ts"
import { portsTable } from "../src/PortsCommands.ts"
import { hasStackTrace, makeHome, prbox, type Run, seedEndedRows, tearDown } from "./support.ts"

const port = portView

describe("prbox ports: the table", () => {
  it("aligns PORT LABEL SOURCE LISTENING ACCESS URL", () => {
    const list: PortList = {
      previewPort: 47000,
      ports: [port(3000, { label: "web app", source: "devcontainer", listening: false }), port(5173, { public: true })]
    }
    expect(portsTable(list).split("\n")).toEqual([
      "PORT  LABEL    SOURCE        LISTENING  ACCESS   URL",
      "3000  web app  devcontainer  no         private  http://3000.abcdefghijkl.localhost:47000/",
      "5173  -        discovered    yes        public   http://5173.abcdefghijkl.localhost:47000/"
    ])
  })

  it("names another Compose service's port service:port", () => {
    const list: PortList = {
      previewPort: 47000,
      ports: [
        port(3000),
        port(5432, { service: "db", source: "compose", url: "http://5432.db.abcdefghijkl.localhost:47000/" })
      ]
    }
    expect(portsTable(list).split("\n")).toEqual([
      "PORT     LABEL  SOURCE      LISTENING  ACCESS   URL",
      "3000     -      discovered  yes        private  http://3000.abcdefghijkl.localhost:47000/",
      "db:5432  -      compose     yes        private  http://5432.db.abcdefghijkl.localhost:47000/"
    ])
  })

  it("says so when there is nothing to list, with where previews are served", () => {
    expect(portsTable({ previewPort: 47000, ports: [] })).toBe(
      "no ports declared or listening (previews are served on 127.0.0.1:47000)"
    )
  })
})

/** A home whose daemon never starts unless a command asks the daemon: bad ports must not. */
let quiet: string
/** A home with a running daemon and one ended sandbox. */
let home: string

beforeAll(async () => {
  quiet = makeHome("ports-quiet")
  home = makeHome("ports")
  await seedEndedRows(home, [["ccccccccccc1", 301]])
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(quiet)
  await tearDown(home)
})

const expectUsage = (run: Run, message: RegExp) => {
  expect(run.code, run.stderr).toBe(2)
  expect(run.stdout).toBe("")
  expect(run.stderr).toMatch(message)
  expect(run.stderr.trim().split("\n")).toHaveLength(1)
  expect(hasStackTrace(run.stderr)).toBe(false)
}

describe("prbox ports: a bad port is a usage error, found before the daemon is asked", () => {
  const cases: ReadonlyArray<readonly [args: ReadonlyArray<string>, message: RegExp]> = [
    [["--public", "0"], /^prbox: --public needs a port number between 1 and 65535, not "0"$/m],
    [["--public", "abc"], /^prbox: --public needs a port number between 1 and 65535, not "abc"$/m],
    [["--private", "65536"], /^prbox: --private needs a port number between 1 and 65535, not "65536"$/m],
    [["--public", "30.5"], /not "30\.5"/],
    [["--public", "-1"], /--public/],
    [["--public", "3000", "--private", "3000"], /^prbox: --public 3000 and --private 3000 contradict each other$/m],
    [["--public", "db:5432", "--private", "db:5432"], /^prbox: --public db:5432 and --private db:5432 contradict/m],
    [["--public", "db:0"], /^prbox: --public needs a port number between 1 and 65535, not "db:0"$/m],
    [["--public", "host.docker.internal:80"], /^prbox: --public: "host.docker.internal" is not a service name/m],
    [["--private", "172.17.0.1:80"], /^prbox: --private: "172.17.0.1" is not a service name/m],
    [["--public", ":80"], /^prbox: --public: "" is not a service name/m]
  ]
  for (const [args, message] of cases) {
    it(`ports abc ${args.join(" ")} → exit 2`, async () => {
      expectUsage(await prbox(quiet, ["ports", "abc", ...args]), message)
      const json = await prbox(quiet, ["ports", "abc", ...args, "--json"])
      expect(json.code).toBe(2)
      expect(JSON.parse(json.stdout)).toEqual({ error: { tag: "Usage", message: expect.stringMatching(/--p/) } })
      // No daemon was started to answer: the flag was refused first.
      expect(existsSync(join(quiet, "run"))).toBe(false)
    })
  }

  it("a flag without its port is refused by the parser, without a stack trace", async () => {
    const run = await prbox(quiet, ["ports", "abc", "--public"])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("--public")
    expect(hasStackTrace(run.stderr)).toBe(false)
    expect(existsSync(join(quiet, "run"))).toBe(false)
  })
})

describe("prbox ports and preview-token name the sandbox like the other commands", () => {
  for (const command of ["ports", "preview-token"]) {
    it(`${command} of an unknown id → exit 3, one line`, async () => {
      const run = await prbox(home, [command, "zzzz"])
      expect(run.code, run.stderr).toBe(3)
      expect(run.stderr).toBe("prbox: no sandbox id starts with zzzz\n")
      const json = await prbox(home, [command, "zzzz", "--json"])
      expect(json.code).toBe(3)
      expect(JSON.parse(json.stdout)).toEqual({
        error: { tag: "NotFound", message: "no sandbox id starts with zzzz" }
      })
    })
  }

  it("--help says what the command does and how scripts authenticate", async () => {
    const help = await prbox(home, ["ports", "--help"])
    expect(help.code).toBe(0)
    for (const text of ["--public", "--private", "--watch", "preview-token", "/s/<id>/<port>/"]) {
      expect(help.stdout).toContain(text)
    }
  })
})
