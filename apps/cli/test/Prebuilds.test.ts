import type { Prebuild } from "@prbox/domain"
import { PrebuildStatus } from "@prbox/protocol"
import { PrebuildRepo, layer as sqliteRepo } from "@prbox/store"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeConfig } from "../../daemon/test/support.ts"
import { decode, hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

const MIB = 1024 ** 2
const now = Date.now()

const row = (id: string, overrides: Partial<Prebuild>): Prebuild => ({
  id,
  key: `${id}-key-0123456789`,
  host: "github.com",
  repository: "o/r",
  baseBranch: "main",
  baseCommit: "abcdef0123456789abcdef0123456789abcdef01",
  image: null,
  volume: null,
  sizeBytes: null,
  state: "making",
  error: null,
  startedAt: now - 3_600_000,
  readyAt: null,
  usedAt: null,
  ...overrides
})

/** Prebuild rows written straight into the store: no container, volume or image of them exists. */
const seedPrebuilds = (stateDir: string, rows: ReadonlyArray<Prebuild>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const repo = yield* PrebuildRepo
      for (const prebuild of rows) yield* repo.insert(prebuild)
    }).pipe(Effect.provide(sqliteRepo({ stateDir })))
  )

let home: string

beforeAll(async () => {
  home = makeHome("prebuilds")
  await seedPrebuilds(home, [
    row("pbready", { state: "ready", sizeBytes: 3 * MIB, readyAt: now - 60_000, usedAt: now - 5_000 }),
    row("pbfailed", { state: "failed", error: "onCreateCommand: exited with 7", startedAt: now - 7_200_000 }),
    // Its daemon is gone: the next one's reconcile ends it failed.
    row("pbmaking", { startedAt: now - 10_800_000 })
  ])
  const started = await prbox(home, ["daemon", "start"])
  expect(started.code, started.stderr).toBe(0)
})

afterAll(async () => {
  await tearDown(home)
})

describe("prbox prebuild --status and doctor", () => {
  it("--json: on, the cap, what the ready ones use, each one newest first with its safe reason", async () => {
    const run = await prbox(home, ["prebuild", "--status", "--json"])
    expect(run.code, run.stderr).toBe(0)
    const status = decode(PrebuildStatus, run.stdout)
    expect(status.enabled).toBe(true)
    expect(status.capBytes).toBe(10 * 1024 ** 3)
    expect(status.usedBytes).toBe(3 * MIB)
    expect(status.prebuilds.map((view) => [view.id, view.state, view.reason])).toEqual([
      ["pbready", "ready", null],
      ["pbfailed", "failed", "onCreateCommand: exited with 7"],
      ["pbmaking", "failed", "the daemon stopped while it was made"]
    ])
  })

  it("text: the summary, then a row each with its base, state, size and ages", async () => {
    const run = await prbox(home, ["prebuild", "--status"])
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.split("\n")
    expect(lines[0]).toBe("prebuilds: 1 ready, 0 making, 2 failed; 3 MiB of 10.0 GiB")
    expect(lines[1]).toMatch(/^REPOSITORY\s+BASE\s+STATE\s+SIZE\s+MADE\s+USED\s+KEY/)
    // Ages from when the rows were seeded (a loaded machine may take minutes to get here).
    expect(lines[2]).toMatch(
      /^github\.com\/o\/r\s+main@abcdef0\s+ready\s+3 MiB\s+\d+m ago\s+\d+[sm] ago\s+pbready-key-/
    )
    expect(run.stdout).toContain("failed: onCreateCommand: exited with 7")
  })

  it("doctor has one line for them", async () => {
    const run = await prbox(home, ["doctor", "--json"])
    const report = JSON.parse(run.stdout) as {
      readonly checks: ReadonlyArray<{ readonly name: string; readonly level: string; readonly detail: string }>
    }
    expect(report.checks.find((check) => check.name === "prebuilds")).toEqual({
      name: "prebuilds",
      level: "ok",
      detail: "1 ready, 0 making, 2 failed; 3 MiB of 10.0 GiB"
    })
  })

  it("neither input nor --status: a usage error that says what to do, no stack trace", async () => {
    const run = await prbox(home, ["prebuild"])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("or --status")
    expect(hasStackTrace(run.stdout + run.stderr)).toBe(false)
  })

  it('"prebuilds": false: status and doctor say off (config.json read afresh)', async () => {
    writeConfig(home, { prebuilds: false })
    const run = await prbox(home, ["prebuild", "--status"])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout.split("\n")[0]).toBe('prebuilds: off ("prebuilds": false in config.json)')
    const json = decode(PrebuildStatus, (await prbox(home, ["prebuild", "--status", "--json"])).stdout)
    expect([json.enabled, json.capBytes]).toEqual([false, null])
    const doctor = JSON.parse((await prbox(home, ["doctor", "--json"])).stdout) as {
      readonly checks: ReadonlyArray<{ readonly name: string; readonly detail: string }>
    }
    expect(doctor.checks.find((check) => check.name === "prebuilds")?.detail).toBe(
      'off ("prebuilds": false in config.json)'
    )
  })
})
