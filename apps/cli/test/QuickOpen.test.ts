import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { FULL_CLI, FULL_CLI_PROBE, makeHome, prbox, type Run, runEntry, tearDown } from "./support.ts"

/**
 * `prbox open` on the fast path (QuickOpen.ts) against a real daemon and
 * engine: it prints what the full CLI prints for an open, without loading
 * it, and hands over whenever it cannot answer (here: an open the daemon
 * refuses).
 */

let home: string
let remote: TestRemote

beforeAll(async () => {
  // Each open takes today's path: no prebuild or pool makes a later open print other lines.
  home = makeHome("cli-quick-open", { prebuilds: false, warmPool: { size: 0, idleMinutes: 30 } })
  remote = makeRemote(home)
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(home)
})

/** A run with what differs between two sandboxes' opens made alike: ids, ports, PR numbers, commits, elapsed times. */
const alike = (run: Run): Run => {
  const same = (text: string) =>
    text
      .replace(/\b[a-z0-9]{12}\b/g, "<id>")
      .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>")
      .replace(/\b[0-9a-f]{7,40}\b/g, "<commit>")
      .replace(/pr-\d+|#\d+|--pr \d+|pull request \d+/g, "<pr>")
      .replace(/^\[\s*[\d.]+s\]/gm, "[<t>]")
  return { code: run.code, stdout: same(run.stdout), stderr: same(run.stderr) }
}

describe("prbox open on the fast path", () => {
  it("a new sandbox: the same progress lines, URL lines and exit code as the full CLI, without loading it", async () => {
    const full = await runEntry(FULL_CLI, home, ["open", remote.path, "--pr", "1"])
    expect(full.code, full.stderr).toBe(0)
    const fast = await prbox(home, ["open", remote.path, "--pr", "2"], { NODE_OPTIONS: FULL_CLI_PROBE })
    expect(fast.stderr).not.toContain("full CLI loaded")
    expect(fast.stdout).toMatch(/^sandbox [a-z0-9]{12} is running: http:\/\/127\.0\.0\.1:\d+\/\n/)
    expect(alike(fast)).toEqual(alike(full))
  }, 180_000)

  it("a running sandbox, with --json and --no-wait: what the full CLI prints (but the touch each open records)", async () => {
    const touched = (run: Run): Run => ({
      ...run,
      stdout: run.stdout.replace(/"lastActivityAt":\d+/, '"lastActivityAt":0')
    })
    for (const args of [
      ["open", remote.path, "--pr", "1", "--json"],
      ["open", "--no-wait", remote.path, "--pr", "2"]
    ]) {
      const full = await runEntry(FULL_CLI, home, args)
      expect(full.code, full.stderr).toBe(0)
      const fast = await prbox(home, args, { NODE_OPTIONS: FULL_CLI_PROBE })
      expect(touched(fast)).toEqual(touched({ ...full, stderr: "" }))
    }
  }, 120_000)

  it("an open the daemon refuses is the full CLI's: its message and exit code", async () => {
    const args = ["open", remote.path, "--pr", "77"]
    const full = await runEntry(FULL_CLI, home, args)
    expect(full.code).not.toBe(0)
    const fast = await prbox(home, args, { NODE_OPTIONS: FULL_CLI_PROBE })
    expect(fast).toEqual({ ...full, stderr: `full CLI loaded\n${full.stderr}` })
  }, 120_000)
})
