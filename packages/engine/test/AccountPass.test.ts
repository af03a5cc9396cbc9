import { assert, describe, it } from "@effect/vitest"
import { SandboxConflict } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Effect, Layer, Option } from "effect"
import { AccountIdentity, Reconciler, SandboxService } from "../src/index.ts"
import { openSettled, rowOf, withEngine } from "./harness.ts"
import { writeV1Database } from "./legacy-fixtures.ts"
import { isRunning, labelledContainer, seedRow } from "./reconcile-fixtures.ts"

const DISCOVERED = "583231"

/**
 * A fake identity service: the hosted APIs (AWS STS, GitHub, GitLab) cannot be
 * reached from here, so the test decides what discovery answers.
 */
const fakeIdentity = () => {
  const accounts = new Map<string, string>()
  const layer = Layer.succeed(
    AccountIdentity,
    AccountIdentity.of({
      discover: (query) => Effect.sync(() => Option.fromUndefinedOr(accounts.get(query.profile ?? "")))
    })
  )
  return { accounts, layer }
}

describe("account identity fallback (fake identity service: hosted APIs unreachable here)", () => {
  it.live("once discovered, rows keyed by the profile or by no account are retired; others are not", () => {
    const identity = fakeIdentity()
    identity.accounts.set("dev", DISCOVERED)
    return withEngine({ identity: identity.layer, config: { profile: "dev" } }, ({ home }) =>
      Effect.gen(function* () {
        const byProfile = yield* seedRow("running", {}, { account: "dev" })
        const byNothing = yield* seedRow("stopped", {}, { account: "", pullRequest: 2 })
        const otherProfile = yield* seedRow("running", {}, { account: "ops", pullRequest: 3 })
        const container = yield* labelledContainer(home, byProfile.id, { running: true })
        const report = yield* (yield* Reconciler).reconcile
        const account = report.passes.find((pass) => pass.pass === "account")
        assert.sameMembers(account?.changes.map((c) => c.sandboxId) ?? [], [byProfile.id, byNothing.id])
        for (const id of [byProfile.id, byNothing.id]) {
          const row = yield* rowOf(id)
          assert.strictEqual(row.status, "stopped")
          assert.isNotNull(row.legacyRetiredAt)
        }
        assert.isFalse(yield* isRunning(container))
        assert.isNull((yield* rowOf(otherProfile.id)).legacyRetiredAt)
      })
    )
  })

  it.live("unavailable: the sandbox is keyed by the profile; discovered later: it is retired and replaced", () => {
    const identity = fakeIdentity()
    return withEngine({ identity: identity.layer, config: { profile: "dev" } }, ({ remote }) =>
      Effect.gen(function* () {
        const fallback = yield* openSettled(remote.path, 1)
        assert.strictEqual(fallback.account, "dev")
        assert.strictEqual(fallback.status, "running")
        identity.accounts.set("dev", DISCOVERED)
        const replacement = yield* openSettled(remote.path, 1)
        assert.notStrictEqual(replacement.id, fallback.id)
        assert.strictEqual(replacement.account, DISCOVERED)
        assert.strictEqual(replacement.status, "running", replacement.error ?? "")
        const retired = yield* rowOf(fallback.id)
        assert.strictEqual(retired.status, "stopped")
        assert.isNotNull(retired.legacyRetiredAt)
        assert.isFalse(yield* isRunning(fallback.containerId ?? ""))
      })
    )
  })

  it.live("unavailable while the PR lives under a discovered account: refused, nothing created", () => {
    const identity = fakeIdentity()
    identity.accounts.set("dev", DISCOVERED)
    return withEngine({ identity: identity.layer, config: { profile: "dev" } }, ({ remote }) =>
      Effect.gen(function* () {
        const live = yield* openSettled(remote.path, 1)
        identity.accounts.clear()
        const refusal = yield* Effect.flip((yield* SandboxService).open({ input: remote.path, pr: 1 }))
        assert.instanceOf(refusal, SandboxConflict)
        assert.strictEqual(refusal.reason, "account identity is unavailable; retry after account discovery")
        const rows = yield* (yield* SandboxRepo).findAll()
        assert.deepStrictEqual(
          rows.map((row) => row.id),
          [live.id]
        )
      })
    )
  })

  it.live("a numeric profile that matches a hostless legacy row is refused as ambiguous", () =>
    withEngine(
      {
        config: { profile: "2024" },
        seed: (home) =>
          writeV1Database(home, [
            {
              id: "legacy000009",
              provider: "github",
              account: "2024",
              repository: "o/r",
              pullRequest: 1,
              password: "pw",
              status: "stopped",
              containerId: null
            }
          ])
      },
      () =>
        Effect.gen(function* () {
          const refusal = yield* Effect.flip((yield* SandboxService).open({ input: "https://github.com/o/r/pull/1" }))
          assert.instanceOf(refusal, SandboxConflict)
          assert.match(refusal.reason, /reads as an account id/)
          assert.lengthOf(yield* (yield* SandboxRepo).findAll(), 1)
        })
    )
  )

  it.live("a container the drift pass found gone is not stopped by the account pass: it sees drift's write", () => {
    const identity = fakeIdentity()
    identity.accounts.set("dev", DISCOVERED)
    const gone = "0".repeat(64)
    const stops: Array<string> = []
    return withEngine(
      {
        identity: identity.layer,
        config: { profile: "dev" },
        runtime: (real) => ({
          ...real,
          stop: (containerId) =>
            Effect.andThen(
              Effect.sync(() => stops.push(containerId)),
              real.stop(containerId)
            )
        })
      },
      () =>
        Effect.gen(function* () {
          const byProfile = yield* seedRow("running", { containerId: gone }, { account: "dev" })
          const report = yield* (yield* Reconciler).reconcile
          const pass = (name: string) => report.passes.find((p) => p.pass === name)
          assert.deepStrictEqual(
            pass("drift")?.changes.map((c) => [c.sandboxId, c.action]),
            [[byProfile.id, "forgot a container Docker no longer has"]]
          )
          assert.deepStrictEqual(
            pass("account")?.changes.map((c) => [c.sandboxId, c.containerId]),
            [[byProfile.id, null]]
          )
          assert.deepStrictEqual(stops, [])
          const row = yield* rowOf(byProfile.id)
          assert.strictEqual(row.status, "stopped")
          assert.isNotNull(row.legacyRetiredAt)
        })
    )
  })
})
