import { assert, describe, it } from "@effect/vitest"
import { type EnvironmentPlan, SandboxId } from "@prbox/domain"
import { Effect, Option, Redacted } from "effect"
import type { NewPoolEntry } from "../src/PoolRepo.ts"
import { freshStateDir, newSandbox, openStore } from "./support.ts"

const plan: EnvironmentPlan = {
  image: "prbox-build/org-repo:abc",
  containerEnv: {},
  remoteEnv: {},
  remoteUser: null,
  workspaceFolder: "/workspaces/widgets",
  forwardPorts: [],
  portsAttributes: {},
  cpus: null,
  memoryMb: null,
  extensions: [],
  steps: []
}

const entry = (n: number, overrides: Partial<NewPoolEntry> = {}): NewPoolEntry => ({
  id: SandboxId.make(`pool${String(n).padStart(8, "0")}`),
  key: "k1",
  prebuildId: "pb1",
  baseCommit: "b".repeat(40),
  host: "github.com",
  repository: "acme/widgets",
  accessPassword: Redacted.make(`pool-password-${n}`),
  workspacePath: `/state/sandboxes/pool${n}/workspace`,
  environment: { kind: "devcontainer", path: ".devcontainer/devcontainer.json", image: plan.image, imageDigest: null },
  environmentPlan: plan,
  createdAt: 100 + n,
  ...overrides
})

/** A PR's claim: a new sandbox's fields but its id, password and workspace, and what it says of its setup until it ends. */
const claimOf = (n: number) => {
  const { id: _id, accessPassword: _password, ...pr } = newSandbox(n)
  return { ...pr, sourceCommit: `head-${n}`, setupError: "setup did not finish" }
}

describe("the warm pool's rows", () => {
  it.effect(
    "a claim turns the oldest ready entry of its key into the PR's row (its id, password, container, port, environment; starting, its source and setup outcome as the claim says; the workspace it holds beside, not yet the row's) and the entry is gone",
    () =>
      Effect.gen(function* () {
        const { pool, repo } = yield* openStore(yield* freshStateDir)
        yield* pool.insert(entry(1))
        yield* pool.insert(entry(2))
        yield* pool.insert(entry(3, { key: "k2" }))
        assert.isUndefined(yield* pool.claim("k1", claimOf(7)), "a making entry is never claimed")
        assert.isTrue(yield* pool.ready(entry(2).id, "c2", 40002))
        assert.isTrue(yield* pool.ready(entry(1).id, "c1", 40001))
        assert.isFalse(yield* pool.ready(entry(1).id, "c9", 40009), "ready once")
        const claimed = yield* pool.claim("k1", claimOf(7))
        const row = claimed?.row
        assert.strictEqual(row?.id, entry(1).id, "the oldest")
        assert.strictEqual(row?.status, "starting", "its container runs: the claim's one status write is running")
        assert.strictEqual(row?.sourceCommit, "head-7")
        assert.strictEqual(row?.setupError, "setup did not finish")
        assert.strictEqual(row?.containerId, "c1")
        assert.strictEqual(row?.hostPort, 40001)
        assert.strictEqual(claimed?.workspacePath, entry(1).workspacePath)
        assert.isNull(row?.workspacePath, "the row's workspace is written once the PR's head is checked out there")
        assert.strictEqual(row?.pullRequest, 7)
        assert.deepStrictEqual(row?.environmentPlan, plan)
        assert.strictEqual(Redacted.value(row?.accessPassword ?? Redacted.make("")), "pool-password-1")
        const stored = Option.getOrThrow(yield* repo.findById(entry(1).id))
        assert.strictEqual(Redacted.value(stored.accessPassword ?? Redacted.make("")), "pool-password-1")
        assert.deepStrictEqual(
          (yield* pool.list).map((e) => [e.id, e.state]),
          [
            [entry(2).id, "ready"],
            [entry(3).id, "making"]
          ]
        )
        assert.isUndefined(yield* pool.take(entry(1).id), "a claimed entry is no longer the pool's to take")
      })
  )

  it.effect("a claim and a take of one entry: exactly one wins", () =>
    Effect.gen(function* () {
      const { pool, repo } = yield* openStore(yield* freshStateDir)
      yield* pool.insert(entry(1))
      yield* pool.ready(entry(1).id, "c1", 40001)
      assert.strictEqual((yield* pool.take(entry(1).id))?.id, entry(1).id)
      assert.isUndefined(yield* pool.claim("k1", claimOf(7)), "taken by gc: nothing to claim")
      assert.lengthOf(yield* repo.findAll(), 0)
      yield* pool.insert(entry(2))
      yield* pool.ready(entry(2).id, "c2", 40002)
      assert.isDefined(yield* pool.claim("k1", claimOf(8)))
      assert.isUndefined(yield* pool.take(entry(2).id), "claimed: gc cannot take it")
    })
  )

  it.effect("a claim refused (the PR already has a live row) writes nothing: the entry stays the pool's", () =>
    Effect.gen(function* () {
      const { pool, repo } = yield* openStore(yield* freshStateDir)
      yield* repo.insert(newSandbox(7))
      yield* pool.insert(entry(1))
      yield* pool.ready(entry(1).id, "c1", 40001)
      const refused = yield* Effect.flip(pool.claim("k1", claimOf(7)))
      assert.strictEqual(refused._tag, "LiveSandboxExists")
      assert.deepStrictEqual(
        (yield* pool.list).map((e) => e.id),
        [entry(1).id]
      )
      assert.lengthOf(yield* repo.findAll(), 1)
    })
  )
})
