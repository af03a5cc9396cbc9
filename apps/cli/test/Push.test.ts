import { execFileSync } from "node:child_process"
import type { PushResult } from "@prbox/client"
import { SandboxView } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { decode, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

let home: string
let remote: TestRemote
let view: SandboxView

const feature = () =>
  execFileSync("git", [`--git-dir=${remote.path}`, "rev-parse", "refs/heads/feature"], { encoding: "utf8" }).trim()

beforeAll(() => {
  // `push` runs git in the sandbox: an image with git; the identity from config.json.
  home = makeHome("cli-push", { image: healthzGitImage(), git: { name: "CLI Person", email: "cli@prbox.invalid" } })
  remote = makeRemote(home)
  execFileSync("git", [`--git-dir=${remote.path}`, "update-ref", "refs/heads/feature", remote.pr1])
})

afterAll(async () => {
  await tearDown(home)
})

describe("prbox push against a real daemon and engine", () => {
  it("shows the commits and refuses to push without --yes off a terminal", async () => {
    const opened = await prbox(home, ["open", remote.path, "--pr", "1", "--json"])
    expect(opened.code, opened.stderr).toBe(0)
    view = decode(SandboxView, opened.stdout)
    const commit = await prbox(home, [
      "exec",
      view.id,
      "--",
      "sh",
      "-c",
      "echo fix > fix.txt && git add fix.txt && git commit -q -m 'fix the typo'"
    ])
    expect(commit.code, commit.stderr).toBe(0)

    const scripted = await prbox(home, ["push", view.id, "--to", "feature"])
    expect(scripted.code).toBe(2)
    expect(scripted.stdout).toContain("1 commit(s) on")
    expect(scripted.stdout).toContain("fix the typo (CLI Person <cli@prbox.invalid>)")
    expect(scripted.stdout).toContain("      fix.txt")
    expect(scripted.stderr).toContain("--yes")
    expect(hasStackTrace(scripted.stderr)).toBe(false)

    const preview = await prbox(home, ["push", view.id, "--to", "feature", "--json"])
    expect(preview.code).toBe(2)
    const shown = JSON.parse(preview.stdout) as PushResult
    expect(shown).toMatchObject({
      sandbox: view.id,
      branch: "feature",
      head: remote.pr1,
      pushed: false,
      refused: { kind: "not-confirmed" }
    })
    expect(shown.commits.map((c) => c.subject)).toEqual(["fix the typo"])
    expect(feature()).toBe(remote.pr1)
  })

  it("--yes pushes; then there is nothing new, refused with exit 4 in the same shape", async () => {
    const pushed = await prbox(home, ["push", view.id, "--to", "feature", "--yes", "--json"])
    expect(pushed.code, pushed.stderr).toBe(0)
    const result = JSON.parse(pushed.stdout) as PushResult
    expect(result.pushed).toBe(true)
    expect(feature()).toBe(result.tip)

    const again = await prbox(home, ["push", view.id, "--to", "feature", "--yes", "--json"])
    expect(again.code).toBe(4)
    expect(JSON.parse(again.stdout)).toMatchObject({ pushed: false, refused: { kind: "no-new-commits" } })
    const plain = await prbox(home, ["push", view.id])
    expect(plain.code).toBe(4)
    expect(plain.stderr).toContain("--to <branch>")
  })
})
