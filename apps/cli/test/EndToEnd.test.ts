import { existsSync } from "node:fs"
import { ExecResult, SandboxEvent, SandboxList, SandboxView } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { containersOfHome, decode, hasStackTrace, makeHome, prbox, socketOf, tearDown } from "./support.ts"

let home: string
let remote: TestRemote
let id = ""
let url = ""

beforeAll(() => {
  home = makeHome("cli", { setupCommands: ["echo setting up", "true"] })
  remote = makeRemote(home)
})

afterAll(async () => {
  await tearDown(home)
})

describe("prbox against a real daemon and engine", () => {
  it("open starts the daemon, shows progress in order, and ends with the URL", async () => {
    const run = await prbox(home, ["open", remote.path, "--pr", "1"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain("prboxd was not running; started it")
    const ready = /sandbox ([a-z0-9]{12}) is running: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(run.stdout)
    expect(ready, run.stdout).not.toBeNull()
    id = ready?.[1] ?? ""
    url = ready?.[2] ?? ""
    expect(run.stdout).toContain(`prbox password ${id}`)
    // Plain progress lines (not a TTY): `[  1.2s] <status>: <line>`, in the order things happened.
    const progress = run.stderr
      .split("\n")
      .map((line) => /^\[\s*[\d.]+s\] (\w+): (.*)$/.exec(line))
      .filter((match) => match !== null)
      .map((match) => ({ status: match[1], line: match[2] }))
    const lines = progress.map((entry) => entry.line)
    const milestones = [
      "status: cloning",
      "status: starting",
      "[1/2] echo setting up",
      "[1/2] setting up",
      "[2/2] true",
      "status: running"
    ]
    const positions = milestones.map((line) => lines.indexOf(line))
    expect(
      positions.every((position) => position >= 0),
      run.stderr
    ).toBe(true)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    const phases = ["creating", "cloning", "starting", "running"]
    const ranks = progress.map((entry) => phases.indexOf(entry.status ?? ""))
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks)
    expect(hasStackTrace(run.stderr)).toBe(false)
  })

  it("ls and status print tables and parse as the protocol's schemas with --json", async () => {
    const table = await prbox(home, ["ls"])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+PR\s+REPO\s+STATUS\s+ENV\s+AGE\s+URL/)
    expect(table.stdout).toContain(id)
    expect(table.stdout).toContain(url)

    const listed = decode(SandboxList, (await prbox(home, ["ls", "--json"])).stdout)
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ id, status: "running", url, pullRequest: 1, hasPassword: true })

    const byPrefix = decode(SandboxView, (await prbox(home, ["status", id.slice(0, 4), "--json"])).stdout)
    expect(byPrefix.id).toBe(id)
    const byPr = decode(SandboxView, (await prbox(home, ["status", remote.path, "--pr", "1", "--json"])).stdout)
    expect(byPr.id).toBe(id)
    const text = await prbox(home, ["status", id])
    expect(text.stdout).toMatch(/status:\s+running/)
    expect(text.stdout).toContain(`prbox password ${id}`)
  })

  it("logs prints the progress log, as lines or as protocol JSON", async () => {
    const text = await prbox(home, ["logs", id])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("status: running")
    const json = await prbox(home, ["logs", id, "--json"])
    const lines = json.stdout
      .trim()
      .split("\n")
      .map((line) => decode(SandboxEvent, line))
    expect(lines.flatMap((event) => (event._tag === "Progress" ? [event.line] : []))).toContain("[2/2] true")
    expect(lines.filter((event) => event._tag === "StatusChanged").map((event) => event.status)).toEqual([
      "cloning",
      "starting",
      "running"
    ])
    const seqs = lines.map((line) => line.seq)
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs)
  })

  it("exec runs a command as a non-root user and passes its exit code through", async () => {
    const run = await prbox(home, ["exec", id, "--", "sh", "-c", "echo out; echo err >&2; exit 3"])
    expect(run.code).toBe(3)
    expect(run.stdout).toContain("out")
    expect(run.stderr).toContain("err")
    const json = await prbox(home, ["exec", id.slice(0, 5), "--json", "--", "id", "-u"])
    expect(json.code).toBe(0)
    const result = decode(ExecResult, json.stdout)
    expect(result).toMatchObject({ exitCode: 0, truncated: false, timedOut: false })
    expect(result.stdout.trim()).not.toBe("0")
  })

  it("password prints the secret only there, and it logs in to code-server", async () => {
    const run = await prbox(home, ["password", id])
    expect(run.code).toBe(0)
    const password = run.stdout.trim()
    expect(password.length).toBeGreaterThan(16)
    for (const args of [
      ["ls", "--json"],
      ["status", id, "--json"],
      ["logs", id]
    ]) {
      expect((await prbox(home, args)).stdout).not.toContain(password)
    }
    const login = await fetch(`${url}login`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password }).toString()
    })
    expect(login.status).toBe(302)
  })

  it("stop stops the container; exec is then refused as a conflict", async () => {
    const run = await prbox(home, ["stop", id, "--json"])
    expect(run.code).toBe(0)
    expect(decode(SandboxView, run.stdout).status).toBe("stopped")
    expect(containersOfHome(home, true)).toHaveLength(0)
    const refused = await prbox(home, ["exec", id, "--", "true"])
    expect(refused.code).toBe(4)
    expect(refused.stderr.trim()).toBe(
      `prbox: sandbox ${id}: it is stopped; exec needs a running sandbox (\`prbox restart ${id}\`)`
    )
  })

  it("restart follows the sandbox until it runs again", async () => {
    const run = await prbox(home, ["restart", id])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`sandbox ${id} is running`)
    expect(run.stderr).toContain("status: running")
    expect(containersOfHome(home, true)).toHaveLength(1)
  })

  it("rm refuses a live sandbox without --force, and removes it with it", async () => {
    const refused = await prbox(home, ["rm", id])
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain("stop it first or pass --force")
    expect(decode(SandboxView, (await prbox(home, ["status", id, "--json"])).stdout).status).toBe("running")
    const removed = await prbox(home, ["rm", id, "--force", "--json"])
    expect(removed.code).toBe(0)
    expect(JSON.parse(removed.stdout)).toEqual({ removed: id })
    expect(decode(SandboxList, (await prbox(home, ["ls", "-a", "--json"])).stdout)).toEqual([])
    expect(containersOfHome(home)).toHaveLength(0)
  })

  // Changed on purpose (issue 9): `ls` after the stop used to exit 5; it now starts the daemon, and
  // `daemon status` (which reports, never starts) is the command that says it is not running.
  it("daemon status and stop; afterwards daemon status says it is not running, and ls starts it", async () => {
    const status = await prbox(home, ["daemon", "status", "--json"])
    expect(status.code).toBe(0)
    expect(JSON.parse(status.stdout)).toMatchObject({ name: "prboxd", api: [1], health: { status: "ok" } })
    const stop = await prbox(home, ["daemon", "stop"])
    expect(stop.code).toBe(0)
    expect(existsSync(socketOf(home))).toBe(false)
    const stopped = await prbox(home, ["daemon", "status"])
    expect(stopped.code).toBe(5)
    expect(stopped.stderr.trim()).toBe(
      `prbox: prboxd is not running for ${home} (start it with \`prbox daemon start\`, or run \`prbox open\`)`
    )
    const ls = await prbox(home, ["ls"])
    expect(ls.code, ls.stderr).toBe(0)
    expect(ls.stderr).toContain("prboxd was not running; started it")
  })
})
