import { assert, describe, it } from "@effect/vitest"
import {
  assessGc,
  closedSeenAtAfter,
  decideIdle,
  type GcPlan,
  type HeartbeatProbe,
  intersectPlans,
  PullRequestNumber,
  type PullRequestState,
  readHeartbeat,
  type Sandbox,
  SandboxId,
  type SandboxStatus
} from "@prbox/domain"
import { Redacted } from "effect"

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const policy = { idleTimeoutMs: 30 * MINUTE, cleanupDelayMs: 24 * HOUR, deleteWhenClosed: false, closedGraceMs: HOUR }
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
  environment: null,
  environmentPlan: null,
  createdAt: 0,
  lastActivityAt,
  stoppedAt,
  legacyRetiredAt: null,
  destroyFenced: false,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  engine: null,
  remoteUrl: null
})

const answered = (lastHeartbeat: number): HeartbeatProbe => ({ _tag: "Answered", lastHeartbeat })
const unanswered: HeartbeatProbe = { _tag: "Unanswered", detail: "no answer" }
const malformed: HeartbeatProbe = { _tag: "Malformed", detail: "no usable lastHeartbeat in the answer" }

describe("decideIdle: uncertainty counts as activity", () => {
  // probe × last API activity → stop or keep (uncertain keeps are logged).
  const table: ReadonlyArray<readonly [string, HeartbeatProbe, number, "stop" | "keep" | "keep, uncertain"]> = [
    ["old heartbeat, old API use", answered(now - HOUR), now - 5 * HOUR, "stop"],
    ["expired form: heartbeat 0 (never beaten), old API use", answered(0), now - HOUR, "stop"],
    ["fresh heartbeat, old API use", answered(now - MINUTE), now - 5 * HOUR, "keep"],
    ["heartbeat exactly the timeout ago", answered(now - 30 * MINUTE), now - 5 * HOUR, "keep"],
    ["heartbeat in the future (clock skew)", answered(now + HOUR), now - 5 * HOUR, "keep"],
    ["old heartbeat, recent API use", answered(now - HOUR), now - MINUTE, "keep"],
    ["API use exactly the timeout ago, old heartbeat", answered(0), now - 30 * MINUTE, "keep"],
    ["failed or timed-out probe, old API use", unanswered, now - 5 * HOUR, "keep, uncertain"],
    ["malformed answer, old API use", malformed, now - 5 * HOUR, "keep, uncertain"],
    ["failed probe, recent API use (nothing to log)", unanswered, now - MINUTE, "keep"]
  ]
  for (const [name, probe, lastApi, expected] of table) {
    it(`${name}: ${expected}`, () => {
      const decision = decideIdle(probe, lastApi, now, policy.idleTimeoutMs)
      const got = decision._tag === "Stop" ? "stop" : decision.uncertain ? "keep, uncertain" : "keep"
      assert.strictEqual(got, expected, decision.reason)
    })
  }

  it("says why", () => {
    assert.strictEqual(
      decideIdle(unanswered, now - 5 * HOUR, now, policy.idleTimeoutMs).reason,
      "heartbeat probe failed (no answer); counted as activity"
    )
    assert.strictEqual(
      decideIdle(answered(now - HOUR), now - 5 * HOUR, now, policy.idleTimeoutMs).reason,
      "idle: no use or heartbeat for 60 min"
    )
  })

  it("a heartbeat is a non-negative integer of ms, anything else is malformed", () => {
    assert.deepStrictEqual(readHeartbeat(1_700_000_000_000), answered(1_700_000_000_000))
    assert.deepStrictEqual(readHeartbeat(0), answered(0))
    for (const nonsense of [undefined, null, "1700000000000", -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.strictEqual(readHeartbeat(nonsense)._tag, "Malformed", String(nonsense))
    }
  })
})

describe("assessGc", () => {
  const table: ReadonlyArray<readonly [string, Sandbox, HeartbeatProbe | undefined, keyof GcPlan | "keep"]> = [
    ["running, touched just now", row("a", "running", now), answered(0), "keep"],
    ["running, idle exactly the timeout", row("b", "running", now - 30 * MINUTE), answered(0), "keep"],
    ["running, idle past the timeout", row("c", "running", now - 31 * MINUTE), answered(0), "stop"],
    ["running, old touch but a fresh heartbeat", row("d", "running", now - 5 * HOUR), answered(now - MINUTE), "keep"],
    ["running, old touch and an old heartbeat", row("e", "running", now - 5 * HOUR), answered(now - HOUR), "stop"],
    ["running, old touch, failed probe", row("l", "running", now - 5 * HOUR), unanswered, "keep"],
    ["running, old touch, not probed (no port)", row("m", "running", now - 5 * HOUR), undefined, "keep"],
    ["starting, long idle (a worker owns it)", row("f", "starting", 0), undefined, "keep"],
    ["stopped a day and a minute ago", row("g", "stopped", 0, now - 24 * HOUR - MINUTE), undefined, "remove"],
    ["stopped an hour ago", row("h", "stopped", 0, now - HOUR), undefined, "keep"],
    ["errored long ago, no stop time", row("i", "error", now - 25 * HOUR), undefined, "remove"],
    ["errored recently", row("j", "error", now - HOUR), undefined, "keep"],
    ["stopping, long ago (a stop owns it)", row("k", "stopping", 0), undefined, "keep"]
  ]
  for (const [name, sandbox, probe, expected] of table) {
    it(`${name}: ${expected}`, () => {
      const probes = new Map(probe === undefined ? [] : [[sandbox.id, probe] as const])
      const { plan } = assessGc([sandbox], now, policy, probes)
      assert.deepStrictEqual(plan.stop, expected === "stop" ? [sandbox.id] : [])
      assert.deepStrictEqual(plan.remove, expected === "remove" ? [sandbox.id] : [])
    })
  }

  it("lists the sandboxes kept only because their probe was uncertain", () => {
    const failed = row("n", "running", now - 5 * HOUR)
    const idle = row("o", "running", now - 5 * HOUR)
    const used = row("p", "running", now)
    const assessment = assessGc(
      [failed, idle, used],
      now,
      policy,
      new Map([
        [failed.id, unanswered],
        [idle.id, answered(0)],
        [used.id, unanswered]
      ])
    )
    assert.deepStrictEqual(assessment.plan.stop, [idle.id])
    assert.deepStrictEqual(
      assessment.uncertain.map((kept) => kept.id),
      [failed.id]
    )
  })
})

describe("assessGc with deleteWhenClosed", () => {
  const closing = { ...policy, deleteWhenClosed: true }
  const withPr = (sandbox: Sandbox, state: PullRequestState | null, closedSeenAt: number | null): Sandbox => ({
    ...sandbox,
    pullRequestState: state,
    closedSeenAt
  })
  // The pull request's state × how long ago it was first seen so × the sandbox's use → what gc does.
  const table: ReadonlyArray<readonly [string, Sandbox, HeartbeatProbe | undefined, keyof GcPlan | "keep"]> = [
    [
      "stopped, merged past the grace",
      withPr(row("a", "stopped", now, now), "merged", now - HOUR),
      undefined,
      "remove"
    ],
    [
      "stopped, closed past the grace",
      withPr(row("b", "stopped", now, now), "closed", now - 2 * HOUR),
      undefined,
      "remove"
    ],
    ["errored, merged past the grace", withPr(row("c", "error", now), "merged", now - HOUR), undefined, "remove"],
    [
      "stopped, merged within the grace",
      withPr(row("d", "stopped", now, now), "merged", now - HOUR + 1),
      undefined,
      "keep"
    ],
    ["stopped, open", withPr(row("e", "stopped", now, now), "open", null), undefined, "keep"],
    ["stopped, state unknown", withPr(row("f", "stopped", now, now), null, null), undefined, "keep"],
    [
      "stopped, unknown state though once seen closed",
      withPr(row("g", "stopped", now, now), null, now - 5 * HOUR),
      undefined,
      "keep"
    ],
    [
      "running and in use, merged long ago",
      withPr(row("h", "running", now), "merged", now - 5 * HOUR),
      answered(now),
      "keep"
    ],
    [
      "running, uncertain probe, merged long ago",
      withPr(row("i", "running", now - 5 * HOUR), "merged", now - 5 * HOUR),
      unanswered,
      "keep"
    ],
    [
      "running and idle, merged long ago",
      withPr(row("j", "running", now - 5 * HOUR), "merged", now - 5 * HOUR),
      answered(0),
      "remove"
    ],
    [
      "running and idle, merged within the grace",
      withPr(row("k", "running", now - 5 * HOUR), "merged", now),
      answered(0),
      "stop"
    ],
    ["starting, merged long ago (a worker owns it)", withPr(row("l", "starting", 0), "merged", 0), undefined, "keep"]
  ]
  for (const [name, sandbox, probe, expected] of table) {
    it(`${name}: ${expected}`, () => {
      const probes = new Map(probe === undefined ? [] : [[sandbox.id, probe] as const])
      const { plan, closed } = assessGc([sandbox], now, closing, probes)
      assert.deepStrictEqual(plan.stop, expected === "stop" ? [sandbox.id] : [])
      assert.deepStrictEqual(plan.remove, expected === "remove" ? [sandbox.id] : [])
      assert.deepStrictEqual(
        closed.map((entry) => entry.id),
        expected === "remove" ? [sandbox.id] : []
      )
    })
  }

  it("without deleteWhenClosed, a merged PR's sandbox waits for the usual timers", () => {
    const stopped = withPr(row("m", "stopped", now, now), "merged", 0)
    assert.deepStrictEqual(assessGc([stopped], now, policy, new Map()).plan.remove, [])
  })

  it("says why", () => {
    const stopped = withPr(row("n", "stopped", now, now), "merged", now - 90 * MINUTE)
    assert.deepStrictEqual(assessGc([stopped], now, closing, new Map()).closed, [
      { id: stopped.id, reason: "pull request merged (first seen 90 min ago)" }
    ])
  })
})

describe("closedSeenAtAfter", () => {
  it.each([
    ["first seen merged", "merged", null, now],
    ["still closed: the first sighting stays", "closed", now - HOUR, now - HOUR],
    ["merged after closed: the first sighting stays", "merged", now - HOUR, now - HOUR],
    ["reopened: cleared", "open", now - HOUR, null],
    ["open", "open", null, null]
  ] as const)("%s", (_, state, current, expected) => {
    assert.strictEqual(closedSeenAtAfter(state, current, now), expected)
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
