import { assert, describe, it } from "@effect/vitest"
import { SandboxConflict } from "@prbox/domain"
import { SandboxRepo } from "@prbox/store"
import { Effect, Layer, Option } from "effect"
import { AccountIdentity, Reconciler, RuntimeError, SandboxService } from "../src/index.ts"
import { docker, openSettled, rowOf, withEngine } from "./harness.ts"
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

  it.live("unavailable while an ended row's container is not confirmed exited: refused; once it is, opened", () => {
    const identity = fakeIdentity()
    identity.accounts.set("dev", DISCOVERED)
    const inspect = { fails: false }
    return withEngine(
      {
        identity: identity.layer,
        config: { profile: "dev" },
        runtime: (real) => ({
          ...real,
          state: (containerId) =>
            inspect.fails
              ? Effect.fail(new RuntimeError({ operation: "inspect", detail: "injected fault" }))
              : real.state(containerId)
        })
      },
      ({ remote }) =>
        Effect.gen(function* () {
          const sandboxes = yield* SandboxService
          const ended = yield* openSettled(remote.path, 1)
          yield* sandboxes.stop(ended.id)
          const container = ended.containerId ?? ""
          identity.accounts.clear()
          const refused = Effect.gen(function* () {
            const refusal = yield* Effect.flip(sandboxes.open({ input: remote.path, pr: 1 }))
            assert.instanceOf(refusal, SandboxConflict)
            assert.strictEqual(refusal.id, ended.id)
            assert.strictEqual(refusal.reason, "account identity is unavailable; retry after account discovery")
            assert.lengthOf(yield* (yield* SandboxRepo).findAll(), 1, "a second sandbox was created")
          })
          // The row says stopped, but its container runs again (started behind prbox's back).
          docker("start", container)
          yield* refused
          assert.isTrue(yield* isRunning(container), "the refused open touched the container")
          docker("kill", container)
          // Docker cannot be asked: not confirmed either.
          inspect.fails = true
          yield* refused
          inspect.fails = false
          const opened = yield* openSettled(remote.path, 1)
          assert.strictEqual(opened.account, "dev")
          assert.strictEqual(opened.status, "running", opened.error ?? "")
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
