import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { hasStackTrace, makeHome, prbox, type Run, tearDown } from "./support.ts"

// Host I/O that fails (the tests run as root: a deleted directory, a path
// replaced by a file) must end the command with an error, never a hang.

let home: string
let remote: TestRemote

beforeAll(() => {
  home = makeHome("cli-host")
  remote = makeRemote(home)
})

afterAll(async () => {
  await tearDown(home)
})

/** Runs the CLI and says how long it took. */
const timed = async (args: ReadonlyArray<string>): Promise<Run & { readonly ms: number }> => {
  const start = Date.now()
  const run = await prbox(home, args)
  return { ...run, ms: Date.now() - start }
}

describe("prbox when host I/O fails", () => {
  it("restart after the workspace directory was deleted fails within 10 s", async () => {
    const opened = await prbox(home, ["open", remote.path, "--pr", "1"])
    expect(opened.code, opened.stderr).toBe(0)
    const id = /sandbox ([a-z0-9]{12}) is running/.exec(opened.stdout)?.[1] ?? ""
    expect((await prbox(home, ["stop", id])).code).toBe(0)
    rmSync(join(home, "sandboxes", id), { recursive: true, force: true })

    const run = await timed(["restart", id])
    expect(run.ms).toBeLessThan(10_000)
    expect(run.code, run.stderr).not.toBe(0)
    expect(run.code).not.toBeNull()
    expect(run.stderr).toContain("could not read the workspace (ENOENT)")
    expect(hasStackTrace(run.stderr)).toBe(false)
  })

  it("open when the sandbox's folder cannot be created fails within 10 s", async () => {
    rmSync(join(home, "sandboxes"), { recursive: true, force: true })
    writeFileSync(join(home, "sandboxes"), "not a directory")

    const run = await timed(["open", remote.path, "--pr", "2"])
    expect(run.ms).toBeLessThan(10_000)
    expect(run.code, run.stderr).not.toBe(0)
    expect(run.code).not.toBeNull()
    expect(run.stderr).toContain("could not create the sandbox's folder")
    expect(hasStackTrace(run.stderr)).toBe(false)
  })
})
