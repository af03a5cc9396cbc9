import { rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { SandboxView, UpdateReport } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { makeRemote, movePullRequest, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { decode, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

let home: string
let remote: TestRemote
let view: SandboxView

beforeAll(() => {
  // `update` runs git in the sandbox: an image with git.
  home = makeHome("cli-update", { image: healthzGitImage() })
  remote = makeRemote(home)
})

afterAll(async () => {
  await tearDown(home)
})

describe("prbox update and rebuild against a real daemon and engine", () => {
  it("--help says what each does", async () => {
    const update = await prbox(home, ["update", "--help"])
    expect(update.code).toBe(0)
    expect(update.stdout).toContain("fast-forward the workspace")
    expect(update.stdout).toContain("--force")
    expect(update.stdout).toContain("prbox/before-update-<n>")
    const rebuild = await prbox(home, ["rebuild", "--help"])
    expect(rebuild.code).toBe(0)
    expect(rebuild.stdout).toContain("keeping its workspace")
  })

  it("refuses a dirty workspace with exit 4 and the files listed (and in --json)", async () => {
    const opened = await prbox(home, ["open", remote.path, "--pr", "1", "--json"])
    expect(opened.code, opened.stderr).toBe(0)
    view = decode(SandboxView, opened.stdout)
    movePullRequest(home, remote.pr1, "next.txt")
    writeFileSync(join(view.workspacePath ?? "", "scratch.txt"), "mine\n")

    const human = await prbox(home, ["update", view.id])
    expect(human.code).toBe(4)
    expect(human.stderr).toContain("uncommitted changes")
    expect(human.stderr).toContain("scratch.txt")
    expect(hasStackTrace(human.stderr)).toBe(false)

    const json = await prbox(home, ["update", view.id, "--json"])
    expect(json.code).toBe(4)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { tag: "UpdateRefused", changedFiles: ["scratch.txt"] } })
  })

  it("fast-forwards once the workspace is clean; --json is the protocol's report", async () => {
    rmSync(join(view.workspacePath ?? "", "scratch.txt"))
    const run = await prbox(home, ["update", view.id, "--json"])
    expect(run.code, run.stderr).toBe(0)
    const report = decode(UpdateReport, run.stdout)
    expect(report.outcome).toBe("fast-forwarded")
    expect(report.from).toBe(remote.pr1)
    expect(report.sandbox.sourceCommit).toBe(report.to)
    const again = await prbox(home, ["update", view.id])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(`sandbox ${view.id} is up to date at ${report.to.slice(0, 7)}`)
  })

  it("rebuild follows the new container until it runs, on the same URL", async () => {
    const run = await prbox(home, ["rebuild", view.id, "--json"])
    expect(run.code, run.stderr).toBe(0)
    const rebuilt = decode(SandboxView, run.stdout)
    expect(rebuilt.status).toBe("running")
    expect(rebuilt.url).toBe(view.url)
    expect(rebuilt.containerId).not.toBe(view.containerId)
  })
})
