import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { GcReport, PruneReport, ReconcileReport, SandboxList } from "@prbox/protocol"
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { healthzTag } from "../../daemon/test/support.ts"
import { containersOfHome, makeHome, prbox, seedEndedRows, tearDown } from "./support.ts"

let home: string
let stray = ""

/** A container of this home that no row owns (never started): only prune removes it. */
const strayContainer = (sandboxId: string) =>
  execFileSync(
    "docker",
    [
      "create",
      "--label",
      `dev.prbox.home=${home}`,
      "--label",
      `dev.prbox.test-run=${inject("testRunId")}`,
      "--label",
      `dev.prbox.sandbox=${sandboxId}`,
      healthzTag
    ],
    { encoding: "utf8" }
  ).trim()

/** Root removes anything it may write, except an immutable file (`chattr +i`; ext4 has it, tmpfs may not). */
const immutableFilesWork = (() => {
  const dir = mkdtempSync(join(tmpdir(), "prbox-chattr-"))
  try {
    writeFileSync(join(dir, "f"), "")
    execFileSync("chattr", ["+i", join(dir, "f")], { stdio: "ignore" })
    execFileSync("chattr", ["-i", join(dir, "f")], { stdio: "ignore" })
    return true
  } catch {
    return false
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})()

const decode = <S extends Schema.Top>(schema: S, text: string): S["Type"] =>
  Schema.decodeUnknownSync(schema as unknown as Schema.Codec<S["Type"], unknown>)(JSON.parse(text))

beforeAll(async () => {
  home = makeHome("maint")
  await seedEndedRows(home, [
    ["bbbbbbbbbbb1", 201],
    ["bbbbbbbbbbb2", 202]
  ])
  stray = strayContainer("zzzzzzzzzzzz")
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(home)
})

describe("reconcile, gc and prune through the CLI", () => {
  it("reconcile reports the container no row owns", async () => {
    const run = await prbox(home, ["reconcile", "--json"])
    expect(run.code, run.stderr).toBe(0)
    const report = decode(ReconcileReport, run.stdout)
    expect(report.passes.map((pass) => pass.pass)).toEqual(["drift", "legacy", "account"])
    const drift = report.passes[0]?.changes ?? []
    expect(drift).toContainEqual(
      expect.objectContaining({ containerId: stray, action: "container with no row (prune removes it)" })
    )
  })

  it("gc shows its plan, refuses to act unconfirmed, and acts with --yes", async () => {
    const dry = await prbox(home, ["gc", "--dry-run", "--json"])
    expect(dry.code, dry.stderr).toBe(0)
    const planned = decode(GcReport, dry.stdout)
    expect(planned.executed).toBe(false)
    expect([...planned.plan.remove].sort()).toEqual(["bbbbbbbbbbb1", "bbbbbbbbbbb2"])

    const text = await prbox(home, ["gc"])
    expect(text.code).toBe(2)
    expect(text.stdout).toContain("remove  bbbbbbbbbbb1")
    expect(text.stderr.trim()).toBe(
      "prbox: refusing to act without confirmation: pass --yes (or --dry-run to only look)"
    )
    expect(decode(SandboxList, (await prbox(home, ["ls", "-a", "--json"])).stdout)).toHaveLength(2)

    const acted = await prbox(home, ["gc", "--yes", "--json"])
    expect(acted.code, acted.stderr).toBe(0)
    const report = decode(GcReport, acted.stdout)
    expect(report.executed).toBe(true)
    expect([...report.removed].sort()).toEqual(["bbbbbbbbbbb1", "bbbbbbbbbbb2"])
    expect(report.failures).toEqual([])
    expect(decode(SandboxList, (await prbox(home, ["ls", "-a", "--json"])).stdout)).toEqual([])
  })

  it("prune lists the orphaned container and removes it with --yes", async () => {
    const dry = await prbox(home, ["prune", "--dry-run", "--json"])
    expect(dry.code, dry.stderr).toBe(0)
    expect(decode(PruneReport, dry.stdout).plan.containers).toEqual([stray])
    expect(containersOfHome(home)).toHaveLength(1)

    const acted = await prbox(home, ["prune", "--yes"])
    expect(acted.code, acted.stderr).toBe(0)
    expect(acted.stdout).toContain("removed 1 container(s)")
    expect(containersOfHome(home)).toHaveLength(0)
  })

  it.skipIf(!immutableFilesWork)(
    "after a partial failure prune prints what it removed next to what failed, and fails",
    async () => {
      const container = strayContainer("yyyyyyyyyyyy")
      const removable = join(home, "workspaces", "yyyyyyyyyyy1")
      mkdirSync(removable, { recursive: true })
      const stuck = join(home, "homes", "yyyyyyyyyyy2")
      mkdirSync(stuck, { recursive: true })
      writeFileSync(join(stuck, "pinned"), "")
      execFileSync("chattr", ["+i", join(stuck, "pinned")])
      try {
        const run = await prbox(home, ["prune", "--yes"])
        expect(run.code, run.stderr).toBe(1)
        expect(run.stdout).toContain(`removed container  ${container}`)
        expect(run.stdout).toContain(`removed directory  ${removable}`)
        expect(run.stdout).not.toContain(`removed directory  ${stuck}`)
        expect(run.stdout).toContain("removed 1 container(s), 0 volume(s), 1 directorie(s)")
        expect(run.stderr).toMatch(new RegExp(`failed: ${stuck}: could not remove \\(E[A-Z]+\\)`))
        expect(containersOfHome(home)).toHaveLength(0)
        expect(existsSync(removable)).toBe(false)
        expect(existsSync(stuck)).toBe(true)
      } finally {
        execFileSync("chattr", ["-i", join(stuck, "pinned")])
      }
    }
  )
})
