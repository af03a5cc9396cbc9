import { assert, describe, it } from "@effect/vitest"
import {
  DriftAction,
  decideDrift,
  decideUnowned,
  orphanedError,
  type RecordedContainer,
  SandboxStatus
} from "@prbox/domain"

const statuses = SandboxStatus.literals
const containers: ReadonlyArray<RecordedContainer> = ["none", "running", "exited", "unlisted", "gone"]

const leave = DriftAction.Leave()
const inspect = DriftAction.Inspect()
const orphaned = DriftAction.MarkOrphaned()
const finishStop = DriftAction.FinishStop()
const goneStopped = DriftAction.RecordGone({ to: "stopped" })
const goneError = DriftAction.RecordGone({ to: "error" })
const exited = DriftAction.RecordExited()
const stopEnded = DriftAction.StopEnded()

// Every row no worker owns, written out: status, recorded container, action, stop unrecorded containers.
const noWorker: ReadonlyArray<readonly [SandboxStatus, RecordedContainer, DriftAction, boolean]> = [
  ["creating", "none", orphaned, false],
  ["creating", "running", orphaned, false],
  ["creating", "exited", orphaned, false],
  ["creating", "unlisted", orphaned, false],
  ["creating", "gone", orphaned, false],
  ["cloning", "none", orphaned, false],
  ["cloning", "running", orphaned, false],
  ["cloning", "exited", orphaned, false],
  ["cloning", "unlisted", orphaned, false],
  ["cloning", "gone", orphaned, false],
  ["starting", "none", orphaned, false],
  ["starting", "running", orphaned, false],
  ["starting", "exited", orphaned, false],
  ["starting", "unlisted", orphaned, false],
  ["starting", "gone", orphaned, false],
  ["running", "none", leave, true],
  ["running", "running", leave, true],
  ["running", "exited", exited, true],
  ["running", "unlisted", inspect, true],
  ["running", "gone", goneStopped, true],
  ["stopping", "none", finishStop, true],
  ["stopping", "running", finishStop, true],
  ["stopping", "exited", finishStop, true],
  ["stopping", "unlisted", inspect, true],
  ["stopping", "gone", goneStopped, true],
  ["stopped", "none", leave, true],
  ["stopped", "running", stopEnded, true],
  ["stopped", "exited", leave, true],
  ["stopped", "unlisted", inspect, true],
  ["stopped", "gone", goneStopped, true],
  ["error", "none", leave, true],
  ["error", "running", stopEnded, true],
  ["error", "exited", leave, true],
  ["error", "unlisted", inspect, true],
  ["error", "gone", goneError, true]
]

describe("decideDrift", () => {
  it("the table covers every status and recorded container", () => {
    assert.strictEqual(noWorker.length, statuses.length * containers.length)
    for (const status of statuses) {
      for (const container of containers) {
        assert.isTrue(
          noWorker.some(([s, c]) => s === status && c === container),
          `${status} × ${container}`
        )
      }
    }
  })

  for (const [status, container, action, stopUnrecorded] of noWorker) {
    it(`no worker, ${status} × ${container} -> ${action._tag}${stopUnrecorded ? " + stop unrecorded" : ""}`, () => {
      assert.deepStrictEqual(decideDrift({ status, container, workerPresent: false }), { action, stopUnrecorded })
    })
  }

  // A worker's row is its worker's to change, whatever Docker says.
  for (const status of statuses) {
    for (const container of containers) {
      it(`worker present, ${status} × ${container} -> Leave`, () => {
        assert.deepStrictEqual(decideDrift({ status, container, workerPresent: true }), {
          action: leave,
          stopUnrecorded: false
        })
      })
    }
  }

  it("an absent listing never decides gone: only an inspect does", () => {
    for (const status of statuses) {
      const { action } = decideDrift({ status, container: "unlisted", workerPresent: false })
      assert.notStrictEqual(action._tag, "RecordGone", status)
    }
  })
})

describe("orphanedError", () => {
  it("says whether the create got as far as a container", () => {
    assert.strictEqual(orphanedError(null), "orphaned (no container)")
    assert.strictEqual(orphanedError("c0ffee"), "interrupted before it was ready")
  })
})

describe("decideUnowned", () => {
  it("stops a running container no row claims and reports an exited one; neither is removed", () => {
    assert.strictEqual(decideUnowned(true), "StopUnowned")
    assert.strictEqual(decideUnowned(false), "ReportUnowned")
  })
})
