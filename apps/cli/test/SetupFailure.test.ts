import { SandboxList, SandboxView } from "@prbox/protocol"
import { describe, expect, it } from "vitest"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { decode, makeHome, prbox, tearDown } from "./support.ts"

/** The CLI's views of a sandbox whose first setup step fails: every one says so, and exec still gets in. */
const showsTheFailure = async (home: string, remote: string) => {
  const setupError = "setup [1/2] failed with exit code 3"
  const run = await prbox(home, ["open", remote, "--pr", "1"])
  expect(run.code, run.stderr).toBe(0)
  const id = /sandbox ([a-z0-9]{12}) is running/.exec(run.stdout)?.[1] ?? ""
  expect(id, run.stdout).not.toBe("")
  expect(run.stdout).toContain(`warning: ${setupError}; its output: \`prbox logs ${id}\``)

  const table = await prbox(home, ["ls"])
  expect(table.stdout).toMatch(new RegExp(`${id}.*running \\(setup failed\\)`))
  const listed = decode(SandboxList, (await prbox(home, ["ls", "--json"])).stdout)
  expect(listed[0]).toMatchObject({ id, status: "running", error: null, setupError })

  const status = await prbox(home, ["status", id])
  expect(status.stdout).toMatch(/status:\s+running\n/)
  expect(status.stdout).toMatch(new RegExp(`setup:\\s+${setupError.replace(/[[\]]/g, "\\$&")}; its output:`))
  expect(decode(SandboxView, (await prbox(home, ["status", id, "--json"])).stdout).setupError).toBe(setupError)

  const logs = await prbox(home, ["logs", id])
  expect(logs.stdout).toContain("[1/2] broken step")
  expect(logs.stdout).not.toContain("[2/2]")

  const exec = await prbox(home, ["exec", id, "--", "sh", "-c", "echo fixing"])
  expect(exec.code, exec.stderr).toBe(0)
  expect(exec.stdout).toContain("fixing")
}

describe("a failed setup step, as the CLI shows it", () => {
  it("open succeeds with a warning; ls, status, --json and logs show the failure; exec gets in", async () => {
    const home = makeHome("cli-setup", { setupCommands: ["echo broken step; exit 3", "echo never"] })
    const remote = makeRemote(home)
    try {
      await showsTheFailure(home, remote.path)
    } finally {
      await tearDown(home)
    }
  })
})
