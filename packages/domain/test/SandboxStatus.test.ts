import { assert, describe, it } from "@effect/vitest"
import { canTransition, isCreateStep, isTerminal, lifecyclePathTo, type SandboxStatus } from "@prbox/domain"

const statuses: ReadonlyArray<SandboxStatus> = [
  "creating",
  "cloning",
  "starting",
  "running",
  "stopping",
  "stopped",
  "error"
]

// The full matrix, written out: every pair not listed is forbidden.
const allowed: ReadonlyArray<readonly [SandboxStatus, SandboxStatus]> = [
  ["creating", "cloning"],
  ["creating", "stopping"],
  ["creating", "error"],
  ["cloning", "starting"],
  ["cloning", "stopping"],
  ["cloning", "error"],
  ["starting", "starting"],
  ["starting", "running"],
  ["starting", "stopping"],
  ["starting", "stopped"],
  ["starting", "error"],
  ["running", "running"],
  ["running", "stopping"],
  ["running", "stopped"],
  ["running", "error"],
  ["stopping", "stopping"],
  ["stopping", "stopped"],
  ["stopping", "error"],
  ["stopped", "starting"],
  ["stopped", "stopping"],
  ["stopped", "stopped"],
  ["stopped", "error"],
  ["error", "starting"],
  ["error", "stopping"],
  ["error", "stopped"],
  ["error", "error"]
]

describe("canTransition", () => {
  for (const from of statuses) {
    for (const to of statuses) {
      const expected = allowed.some(([f, t]) => f === from && t === to)
      it(`${from} -> ${to} is ${expected ? "allowed" : "refused"}`, () => {
        assert.strictEqual(canTransition(from, to), expected)
      })
    }
  }

  it("never leaves stopping except to stopped or error (stop wins)", () => {
    for (const to of statuses) {
      if (canTransition("stopping", to)) assert.include(["stopping", "stopped", "error"], to)
    }
  })
})

describe("status classes", () => {
  const table: ReadonlyArray<readonly [SandboxStatus, boolean, boolean]> = [
    // status, terminal, create step
    ["creating", false, true],
    ["cloning", false, true],
    ["starting", false, true],
    ["running", false, false],
    ["stopping", false, false],
    ["stopped", true, false],
    ["error", true, false]
  ]
  for (const [status, terminal, createStep] of table) {
    it(`${status}: terminal=${terminal}, create step=${createStep}`, () => {
      assert.strictEqual(isTerminal(status), terminal)
      assert.strictEqual(isCreateStep(status), createStep)
    })
  }
})

describe("lifecyclePathTo", () => {
  for (const to of statuses) {
    it(`reaches ${to} from creating by allowed steps`, () => {
      const path = lifecyclePathTo(to)
      assert.strictEqual(path.at(-1) ?? "creating", to)
      path.reduce<SandboxStatus>((from, next) => {
        assert.isTrue(canTransition(from, next), `${from} -> ${next}`)
        return next
      }, "creating")
    })
  }
})
