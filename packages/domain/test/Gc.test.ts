import { assert, describe, it } from "@effect/vitest"
import {
  type GcPlan,
  intersectPlans,
  lastActivity,
  PullRequestNumber,
  planGc,
  type Sandbox,
  SandboxId,
  type SandboxStatus
} from "@prbox/domain"
import { Redacted } from "effect"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const policy = { idleTimeoutMs: 30 * MINUTE, cleanupDelayMs: 24 * HOUR }
const now = 100 * HOUR

const row = (id: string, status: SandboxStatus, lastActivityAt: number, stoppedAt: number | null = null): Sandbox => ({
  id: SandboxId.make(id.padEnd(12, "0")),
  provider: "github",
  host: "github.com",
  account: "1",
  repository: "o/r",
  pullRequest: PullRequestNumber.make(1),
  title: null,
  sourceBranch: null,
  sourceCommit: null,
  accessPassword: Redacted.make("pw"),
  workspacePath: "/w",
  containerId: "c",
  hostPort: 1,
  status,
  detail: null,
  error: null,
  setupError: null,
  createdAt: 0,
  lastActivityAt,
  stoppedAt,
  legacyRetiredAt: null,
  destroyFenced: false
})

describe("planGc", () => {
  const table: ReadonlyArray<readonly [string, Sandbox, number | undefined, keyof GcPlan | "keep"]> = [
    ["running, touched just now", row("a", "running", now), undefined, "keep"],
    ["running, idle exactly the timeout", row("b", "running", now - 30 * MINUTE), undefined, "keep"],
    ["running, idle past the timeout", row("c", "running", now - 31 * MINUTE), undefined, "stop"],
    ["running, old touch but a fresh heartbeat", row("d", "running", now - 5 * HOUR), now - MINUTE, "keep"],
    ["running, old touch and an old heartbeat", row("e", "running", now - 5 * HOUR), now - HOUR, "stop"],
    ["starting, long idle (a worker owns it)", row("f", "starting", 0), undefined, "keep"],
    ["stopped a day and a minute ago", row("g", "stopped", 0, now - 24 * HOUR - MINUTE), undefined, "remove"],
    ["stopped an hour ago", row("h", "stopped", 0, now - HOUR), undefined, "keep"],
    ["errored long ago, no stop time", row("i", "error", now - 25 * HOUR), undefined, "remove"],
    ["errored recently", row("j", "error", now - HOUR), undefined, "keep"],
    ["stopping, long ago (a stop owns it)", row("k", "stopping", 0), undefined, "keep"]
  ]
  for (const [name, sandbox, heartbeat, expected] of table) {
    it(`${name}: ${expected}`, () => {
      const heartbeats = new Map(heartbeat === undefined ? [] : [[sandbox.id, heartbeat] as const])
      const plan = planGc([sandbox], now, policy, heartbeats)
      assert.deepStrictEqual(plan.stop, expected === "stop" ? [sandbox.id] : [])
      assert.deepStrictEqual(plan.remove, expected === "remove" ? [sandbox.id] : [])
    })
  }

  it("activity is the latest of touch and heartbeat", () => {
    assert.strictEqual(lastActivity({ lastActivityAt: 5 }, 9), 9)
    assert.strictEqual(lastActivity({ lastActivityAt: 5 }, 3), 5)
    assert.strictEqual(lastActivity({ lastActivityAt: 5 }, undefined), 5)
  })
})

describe("intersectPlans", () => {
  const id = (s: string) => SandboxId.make(s.padEnd(12, "0"))
  it("acts only on what was shown and is still true", () => {
    const shown: GcPlan = { stop: [id("a"), id("b")], remove: [id("c"), id("d")] }
    const current: GcPlan = { stop: [id("b"), id("x")], remove: [id("d"), id("y")] }
    assert.deepStrictEqual(intersectPlans(shown, current), { stop: [id("b")], remove: [id("d")] })
  })
})
