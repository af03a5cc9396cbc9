import { DiffResult, FileContent, FileListing, SandboxView } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, pushPullRequest } from "../../../packages/git/test/helpers.ts"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { decode, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

let home: string
let id: string

beforeAll(async () => {
  home = makeHome("cli-files", { image: healthzGitImage() })
  const remote = `${home}/remote.git`
  makeRemote(home)
  pushPullRequest(remote, 4, { "src/app.txt": "one\ntwo\nthree\n", "link-out": { link: "/srv/prbox/entrypoint.sh" } })
  const opened = await prbox(home, ["open", remote, "--pr", "4", "--json"])
  if (opened.code !== 0) throw new Error(opened.stderr)
  id = decode(SandboxView, opened.stdout).id
}, 180_000)

afterAll(async () => {
  await tearDown(home)
})

describe("prbox cat, files and diff against a real daemon and engine", () => {
  it("--help says what each does", async () => {
    const cat = await prbox(home, ["cat", "--help"])
    expect(cat.stdout).toContain("--lines")
    expect(cat.stdout).toContain("paths outside the workspace are refused")
    const diff = await prbox(home, ["diff", "--help"])
    expect(diff.stdout).toContain("--base")
    expect(diff.stdout).toContain("untracked files included")
  })

  it("cat prints a file or its lines; --json is the protocol's FileContent", async () => {
    const whole = await prbox(home, ["cat", id, "src/app.txt"])
    expect([whole.code, whole.stdout]).toEqual([0, "one\ntwo\nthree\n"])
    const part = await prbox(home, ["cat", id, "src/app.txt", "--lines", "2:3"])
    expect(part.stdout).toBe("two\nthree\n")
    const json = await prbox(home, ["cat", id, "src/app.txt", "--lines", "2", "--json"])
    expect(decode(FileContent, json.stdout)).toMatchObject({ content: "two\n", startLine: 2, endLine: 2, totalLines: 3 })
  })

  it("cat refuses escapes and bad ranges with exit 2, one line, no stack trace", async () => {
    for (const path of ["../../etc/passwd", "/etc/passwd", "link-out"]) {
      const refused = await prbox(home, ["cat", id, path])
      expect(refused.code, path).toBe(2)
      expect(refused.stderr).toMatch(/outside the workspace|climbs out|absolute/)
      expect(hasStackTrace(refused.stderr)).toBe(false)
    }
    const json = await prbox(home, ["cat", id, "link-out", "--json"])
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { tag: "InvalidPath" } })
    const range = await prbox(home, ["cat", id, "src/app.txt", "--lines", "3:2"])
    expect(range.code).toBe(2)
    expect(range.stderr).toContain("--lines takes")
  })

  it("files lists a folder; diff shows the sandbox's changes, and --base the PR's", async () => {
    const listed = await prbox(home, ["files", id, "--depth", "2"])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain("  .git/\n")
    expect(listed.stdout).toContain("14  src/app.txt\n")
    expect(listed.stdout).toContain("  link-out@\n")
    const json = await prbox(home, ["files", id, "src", "--json"])
    expect(decode(FileListing, json.stdout).entries).toEqual([{ path: "src/app.txt", type: "file", size: 14 }])

    const clean = await prbox(home, ["diff", id])
    expect([clean.code, clean.stdout]).toEqual([0, ""])
    const edit = await prbox(home, ["exec", id, "--", "sh", "-c", "echo four >> src/app.txt"])
    expect(edit.code, edit.stderr).toBe(0)
    const changed = await prbox(home, ["diff", id, "--json"])
    const result = decode(DiffResult, changed.stdout)
    expect(result.against).toBe("head")
    expect(result.diff).toContain("+four")
    const base = await prbox(home, ["diff", id, "--base", "--stat"])
    expect(base.code, base.stderr).toBe(0)
    expect(base.stdout).toMatch(/src\/app\.txt \| 3 \+\+\+/)
  })
})
