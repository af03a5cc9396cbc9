import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { SandboxConflict, SandboxId } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Effect } from "effect"
import { Reconciler, SandboxService } from "../src/index.ts"
import { LEGACY_UNAUTHENTICATED } from "../src/reconcile/LegacyPass.ts"
import { openRunning, rowOf, withEngine } from "./harness.ts"
import { isRunningNow, runLabelled, writeV1Database } from "./legacy-fixtures.ts"

const reconcile = Effect.flatMap(Reconciler, (reconciler) => reconciler.reconcile)
const legacyChanges = Effect.map(
  reconcile,
  (report) => report.passes.find((pass) => pass.pass === "legacy")?.changes ?? []
)

const ids = {
  unauthenticated: SandboxId.make("legacy000001"),
  hostless: SandboxId.make("legacy000002"),
  hostlessStopped: SandboxId.make("legacy000003")
}

/** An authenticated hostless v1 row (PR 2) whose running container it records. */
const hostlessRunning = () => {
  let container = ""
  const seed = (home: string) => {
    container = runLabelled(home, ids.hostless)
    writeV1Database(home, [
      { id: ids.hostless, repository: "/r", pullRequest: 2, password: "pw", status: "running", containerId: container }
    ])
  }
  return { seed, container: () => container }
}

/** An unauthenticated v1 row (PR 1) with a running labelled container, which the row records or not. */
const unauthenticatedWithContainer = (options: {
  readonly repository: (home: string) => string
  readonly status: string
  readonly recorded: boolean
}) => {
  let container = ""
  const seed = (home: string) => {
    container = runLabelled(home, ids.unauthenticated)
    writeV1Database(home, [
      {
        id: ids.unauthenticated,
        repository: options.repository(home),
        pullRequest: 1,
        password: null,
        status: options.status,
        containerId: options.recorded ? container : null
      }
    ])
  }
  return { seed, container: () => container }
}

/** The crash between "marked retiring" and "stopped": the first write happened, the container still runs. */
const markRetiring = Effect.flatMap(SandboxRepo, (repo) =>
  repo.updateStatus(ids.hostless, { to: "stopping", legacyRetiredAt: 5 })
)

describe("legacy pass", () => {
  it.live("stops unauthenticated rows' containers and retires hostless ones; a second pass changes nothing", () => {
    const containers: Record<string, string> = {}
    return withEngine(
      {
        seed: (home) => {
          containers.persisted = runLabelled(home, ids.unauthenticated)
          containers.labelledOnly = runLabelled(home, ids.unauthenticated)
          containers.hostless = runLabelled(home, ids.hostless)
          writeV1Database(home, [
            {
              id: ids.unauthenticated,
              repository: "/r",
              pullRequest: 1,
              password: null,
              status: "running",
              containerId: containers.persisted
            },
            {
              id: ids.hostless,
              repository: "/r",
              pullRequest: 2,
              password: "pw",
              status: "running",
              containerId: containers.hostless
            },
            {
              id: ids.hostlessStopped,
              repository: "/r",
              pullRequest: 3,
              password: "pw",
              status: "stopped",
              containerId: null
            }
          ])
        }
      },
      () =>
        Effect.gen(function* () {
          const changes = yield* legacyChanges
          assert.sameMembers(
            changes.map((c) => c.sandboxId),
            [ids.unauthenticated, ids.hostless, ids.hostlessStopped]
          )
          const unauthenticated = yield* rowOf(ids.unauthenticated)
          assert.strictEqual(unauthenticated.status, "error")
          assert.strictEqual(unauthenticated.error, LEGACY_UNAUTHENTICATED)
          assert.isFalse(isRunningNow(containers.persisted ?? ""))
          assert.isFalse(isRunningNow(containers.labelledOnly ?? ""))
          for (const id of [ids.hostless, ids.hostlessStopped]) {
            const retired = yield* rowOf(id)
            assert.strictEqual(retired.status, "stopped")
            assert.isNotNull(retired.legacyRetiredAt)
          }
          assert.isFalse(isRunningNow(containers.hostless ?? ""))
          assert.isEmpty(yield* legacyChanges)
        })
    )
  })

  it.live("an open of a legacy row's PR retires it first and creates a replacement", () => {
    let container = ""
    return withEngine(
      {
        seed: (home) => {
          container = runLabelled(home, ids.hostless)
          const repository = join(home, "remote.git")
          writeV1Database(home, [
            { id: ids.hostless, repository, pullRequest: 1, password: "pw", status: "running", containerId: container }
          ])
        }
      },
      ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const opened = yield* sandboxes.open({ input: remote.path, pr: 1 })
          assert.notStrictEqual(opened.id, ids.hostless)
          yield* sandboxes.awaitIdle(opened.id)
          assert.strictEqual((yield* rowOf(opened.id)).status, "running")
          const legacy = yield* rowOf(ids.hostless)
          assert.strictEqual(legacy.status, "stopped")
          assert.isNotNull(legacy.legacyRetiredAt)
          assert.isFalse(isRunningNow(container))
        })
    )
  })

  it.live(
    "an open of an unauthenticated legacy row's PR stops and marks it, and is refused until it is removed",
    () => {
      const seeded = unauthenticatedWithContainer({
        repository: (home) => join(home, "remote.git"),
        status: "running",
        recorded: true
      })
      return withEngine({ seed: seeded.seed }, ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const refusal = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 1 }))
          assert.instanceOf(refusal, SandboxConflict)
          assert.strictEqual(refusal.id, ids.unauthenticated)
          assert.include(refusal.reason, "requires explicit cleanup before recreation")
          assert.include(refusal.reason, `\`prbox rm ${ids.unauthenticated}\``)
          const marked = yield* rowOf(ids.unauthenticated)
          assert.strictEqual(marked.status, "error")
          assert.strictEqual(marked.error, LEGACY_UNAUTHENTICATED)
          assert.isFalse(isRunningNow(seeded.container()))
          assert.lengthOf(yield* (yield* SandboxRepo).findAll(), 1, "a sandbox was created beside the legacy row")
          // Refused again, not only on the open that marked it.
          assert.instanceOf(yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 1 })), SandboxConflict)
          yield* sandboxes.delete(ids.unauthenticated)
          const replacement = yield* openRunning(remote.path, 1)
          assert.notStrictEqual(replacement.id, ids.unauthenticated)
        })
      )
    }
  )

  it.live("an interrupted retirement is finished by the next pass", () => {
    const hostless = hostlessRunning()
    return withEngine({ seed: hostless.seed }, () =>
      Effect.gen(function* () {
        const sandboxes = yield* SandboxService
        yield* markRetiring
        const report = yield* reconcile
        assert.include(
          report.passes.flatMap((pass) => pass.changes.map((c) => c.sandboxId)),
          ids.hostless
        )
        const row = yield* rowOf(ids.hostless)
        assert.strictEqual(row.status, "stopped")
        assert.strictEqual(row.legacyRetiredAt, 5)
        assert.isFalse(isRunningNow(hostless.container()))
        const refusal = yield* Effect.flip(sandboxes.restart(ids.hostless))
        assert.instanceOf(refusal, SandboxConflict)
        assert.match(refusal.message, /retired/)
      })
    )
  })

  it.live("a retirement the drift pass finished is not redone: the legacy pass sees drift's write", () => {
    const hostless = hostlessRunning()
    return withEngine({ seed: hostless.seed }, () =>
      Effect.gen(function* () {
        yield* markRetiring
        const report = yield* reconcile
        const pass = (name: string) => report.passes.find((p) => p.pass === name)
        assert.deepStrictEqual(
          pass("drift")?.changes.map((c) => [c.sandboxId, c.action]),
          [[ids.hostless, "finished an interrupted stop"]]
        )
        assert.deepStrictEqual(pass("legacy"), { pass: "legacy", changes: [], failures: [] })
        assert.strictEqual((yield* rowOf(ids.hostless)).status, "stopped")
      })
    )
  })

  it.live("a container the drift pass stopped is not stopped again: the legacy pass sees it stopped", () => {
    const legacy = unauthenticatedWithContainer({ repository: () => "/r", status: "stopped", recorded: false })
    const unrecorded = legacy.container
    return withEngine({ seed: legacy.seed }, () =>
      Effect.gen(function* () {
        // Already marked by an earlier pass; the container it does not record still runs.
        yield* (yield* SandboxRepo).updateStatus(ids.unauthenticated, { to: "error", error: LEGACY_UNAUTHENTICATED })
        const report = yield* reconcile
        const pass = (name: string) => report.passes.find((p) => p.pass === name)
        assert.deepStrictEqual(
          pass("drift")?.changes.map((c) => [c.containerId, c.action]),
          [[unrecorded(), "stopped a container the row does not record"]]
        )
        assert.deepStrictEqual(pass("legacy"), { pass: "legacy", changes: [], failures: [] })
        assert.isFalse(isRunningNow(unrecorded()))
      })
    )
  })
})
