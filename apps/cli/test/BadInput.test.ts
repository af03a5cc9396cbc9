import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, pushPullRequest, type TestRemote } from "../../../packages/git/test/helpers.ts"
import {
  containersOfHome,
  hasStackTrace,
  makeHome,
  prbox,
  type Run,
  seedEndedRows,
  socketOf,
  tearDown,
  writeConfig
} from "./support.ts"

let home: string
let quiet: string
let broken: string
let dockerless: string
let remote: TestRemote

beforeAll(async () => {
  // PR 9's widening is refused rather than left out: the user chose "refuse".
  home = makeHome("bad", { untrustedWidening: "refuse" })
  remote = makeRemote(home)
  pushPullRequest(remote.path, 9, {
    ".devcontainer/devcontainer.json": JSON.stringify({ image: "debian", privileged: true })
  })
  await seedEndedRows(home, [
    ["aaaaaaaaaaa1", 101],
    ["aaaaaaaaaaa2", 102]
  ])
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
  // A home with no daemon, one whose daemon cannot start (its run directory is a file), and a daemon that cannot reach Docker.
  quiet = makeHome("quiet")
  broken = makeHome("broken")
  writeFileSync(join(broken, "run"), "")
  dockerless = makeHome("nodocker")
  const nodocker = await prbox(dockerless, ["daemon", "start"], { DOCKER_HOST: "unix:///nonexistent/docker.sock" })
  expect(nodocker.code, nodocker.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(home)
  await tearDown(quiet)
  await tearDown(broken)
  await tearDown(dockerless)
})

/** What the user can observe of the state: every row and its status, and the home's containers. */
const snapshot = async (where: string) => {
  const listed = await prbox(where, ["ls", "-a", "--json"])
  return { rows: listed.code === 0 ? listed.stdout : "unreachable", containers: containersOfHome(where).length }
}

/**
 * The home's entries but the git mirrors: an open fetches the PR (a cache)
 * before it reads the PR's devcontainer.json, which it may then refuse.
 */
const stateFiles = (where: string) =>
  readdirSync(where)
    .filter((name) => name !== "mirrors")
    .sort()

const expectOneLine = (run: Run, code: number, message: RegExp) => {
  expect(run.code, run.stderr).toBe(code)
  expect(run.stdout).toBe("")
  const lines = run.stderr.split("\n").filter((line) => line.length > 0)
  expect(lines, run.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^prbox: /)
  expect(lines[0]).toMatch(message)
  expect(hasStackTrace(run.stderr)).toBe(false)
}

const expectJsonError = (run: Run, code: number, tag: string, message: RegExp) => {
  expect(run.code).toBe(code)
  expect(run.stderr).toBe("")
  const body = JSON.parse(run.stdout) as { error: { tag: string; message: string } }
  expect(Object.keys(body)).toEqual(["error"])
  expect(body.error.tag).toBe(tag)
  expect(body.error.message).toMatch(message)
}

interface Case {
  readonly name: string
  readonly where: () => string
  readonly args: () => ReadonlyArray<string>
  readonly code: number
  readonly tag: string
  readonly message: RegExp
}

const cases: ReadonlyArray<Case> = [
  {
    name: "an unknown id",
    where: () => home,
    args: () => ["status", "zzzz"],
    code: 3,
    tag: "NotFound",
    message: /no sandbox id starts with zzzz/
  },
  {
    name: "an unknown pull request",
    where: () => home,
    args: () => ["stop", "o/r#7"],
    code: 3,
    tag: "NotFound",
    message: /no sandbox for o\/r#7/
  },
  {
    name: "an ambiguous prefix",
    where: () => home,
    args: () => ["rm", "aaaa", "--force"],
    code: 3,
    tag: "Ambiguous",
    message: /aaaa matches 2 sandboxes \(aaaaaaaaaaa\d, aaaaaaaaaaa\d\); type more of the id/
  },
  {
    name: "a malformed PR URL",
    where: () => home,
    args: () => ["open", "https://github.com/o/r/issues/1"],
    code: 2,
    tag: "InvalidPrRef",
    message: /cannot open "https:\/\/github\.com\/o\/r\/issues\/1": not a pull request URL/
  },
  {
    name: "a malformed owner/repo#N",
    where: () => home,
    args: () => ["open", "o/r#x"],
    code: 2,
    tag: "InvalidPrRef",
    message: /must be a positive whole number/
  },
  {
    name: "a devcontainer.json whose widening the user refuses (untrustedWidening: refuse)",
    where: () => home,
    args: () => ["open", remote.path, "--pr", "9"],
    code: 2,
    tag: "InvalidDevcontainer",
    message: /\.devcontainer\/devcontainer\.json: .*privileged/
  },
  {
    name: "a named devcontainer configuration the PR does not have",
    where: () => home,
    args: () => ["open", remote.path, "--pr", "9", "--devcontainer", "gpu"],
    code: 2,
    tag: "InvalidDevcontainer",
    message: /gpu/
  },
  {
    // Changed on purpose (issue 9): commands start a missing daemon, so "unreachable" is now one that cannot start.
    name: "a daemon that cannot start",
    where: () => broken,
    args: () => ["status", "aaaa"],
    code: 5,
    tag: "DaemonUnreachable",
    message: /prboxd exited with code 1 while starting: prboxd: refusing to use .*prbox-broken-.*\/run/
  },
  {
    name: "Docker down",
    where: () => dockerless,
    args: () => ["open", remote.path, "--pr", "1"],
    code: 6,
    tag: "DockerUnavailable",
    message: /could not list containers: .*nonexistent\/docker\.sock/
  }
]

describe("bad input: one clear line, a distinct exit code, no state change", () => {
  for (const entry of cases) {
    it(`${entry.name} → exit ${entry.code}`, async () => {
      const where = entry.where()
      const before = await snapshot(where)
      const files = stateFiles(where)
      expectOneLine(await prbox(where, entry.args()), entry.code, entry.message)
      expectJsonError(await prbox(where, [...entry.args(), "--json"]), entry.code, entry.tag, entry.message)
      expect(await snapshot(where)).toEqual(before)
      expect(stateFiles(where)).toEqual(files)
    })
  }

  it("an invalid config → exit 7, and no sandbox is created", async () => {
    const before = await snapshot(home)
    writeConfig(home, { image: 5 })
    try {
      const run = await prbox(home, ["open", remote.path, "--pr", "1"])
      expectOneLine(run, 7, /invalid config .*config\.json: .*image/)
      expectJsonError(await prbox(home, ["open", remote.path, "--pr", "1", "--json"]), 7, "InvalidConfig", /image/)
    } finally {
      writeConfig(home, { untrustedWidening: "refuse" })
    }
    expect(await snapshot(home)).toEqual(before)
  })

  // Changed on purpose (issue 9): was "an unreachable daemon is not started by commands other than open" (exit 5).
  it("the daemon is started by every command that needs it (ls with no daemon answers)", async () => {
    expect(readdirSync(quiet)).not.toContain("run")
    const run = await prbox(quiet, ["ls"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toBe("no active sandboxes (prbox ls -a shows all)\n")
    expect(run.stderr).toMatch(/^prbox: prboxd was not running; started it \(pid \d+, log .*prboxd\.log\)\n$/)
    expect(socketOf(quiet)).toBe(join(quiet, "run", "prboxd.sock"))
    expect(existsSync(socketOf(quiet))).toBe(true)
    const again = await prbox(quiet, ["ls", "--json"])
    expect(again).toMatchObject({ code: 0, stdout: "[]\n", stderr: "" })
  })

  it("usage errors exit 2 without a stack trace", async () => {
    for (const args of [["exec", "aaaa"], ["open"], ["frobnicate"], ["ls", "--bogus"]]) {
      const run = await prbox(home, args)
      expect(run.code, args.join(" ")).toBe(2)
      expect(hasStackTrace(run.stderr)).toBe(false)
    }
  })
})
