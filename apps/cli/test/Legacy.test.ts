import { chmodSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeV1Database } from "../../../packages/engine/test/legacy-fixtures.ts"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { containersOfHome, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

const id = "legacy000001"
const action = `legacy sandbox without a password: delete it with \`prbox rm ${id}\` and open the PR again`
let home: string
let remote: TestRemote

beforeAll(() => {
  home = makeHome("cli-legacy")
  remote = makeRemote(home)
  // A row schema v1 wrote without an access password, for PR 1 of the remote.
  writeV1Database(home, [
    { id, repository: remote.path, pullRequest: 1, password: null, status: "stopped", containerId: null }
  ])
  chmodSync(join(home, "prbox.db"), 0o600)
})

afterAll(async () => {
  await tearDown(home)
})

describe("a legacy sandbox without a password", () => {
  it("is flagged with what to do by ls, status and doctor", async () => {
    const ls = await prbox(home, ["ls"])
    expect(ls.code, ls.stderr).toBe(0)
    expect(ls.stdout).toMatch(new RegExp(`^${id}\\s+#1\\s+\\S+remote.git\\s+error \\(legacy\\)`, "m"))
    expect(ls.stdout).toContain(`warning: ${action}`)

    const status = await prbox(home, ["status", id])
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toMatch(new RegExp(`^warning:\\s+${action.replace(/[`()]/g, "\\$&")}$`, "m"))

    const doctor = await prbox(home, ["doctor"])
    expect(doctor.stdout).toMatch(/^warn\s+legacy\s+1 legacy sandbox\(es\) without a password.*legacy000001/m)
  })

  it("blocks opening its PR: a conflict (exit 4) naming `prbox rm`, and no sandbox beside it", async () => {
    const open = await prbox(home, ["open", remote.path, "--pr", "1"])
    expect(open.code, open.stderr).toBe(4)
    expect(open.stderr).toContain("requires explicit cleanup before recreation")
    expect(open.stderr).toContain(`prbox rm ${id}`)
    expect(hasStackTrace(open.stderr)).toBe(false)
    expect(containersOfHome(home)).toEqual([])
    const listed = await prbox(home, ["ls", "-a", "--json"])
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((view) => view.id)).toEqual([id])
  })
})
