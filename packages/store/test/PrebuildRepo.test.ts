import { assert, describe, it } from "@effect/vitest"
import type { Prebuild } from "@prbox/domain"
import { Effect } from "effect"
import { PREBUILD_ERROR_CHARS } from "../src/PrebuildRepo.ts"
import { databaseIn, freshStateDir, openStore, rawDatabase } from "./support.ts"

const prebuild = (n: number, overrides: Partial<Prebuild> = {}): Prebuild => ({
  id: `pb-${n}`,
  key: "k1",
  host: "localhost",
  repository: "acme/widgets",
  baseBranch: "main",
  baseCommit: `${n}`.repeat(40).slice(0, 40),
  image: null,
  volume: null,
  sizeBytes: null,
  state: "making",
  error: null,
  startedAt: 1000 + n,
  readyAt: null,
  usedAt: null,
  ...overrides
})

describe("prebuilds", () => {
  it.effect("a row reads back; the newest ready one of a key is the one a PR starts from; list is newest first", () =>
    Effect.gen(function* () {
      const { prebuilds } = yield* openStore(yield* freshStateDir)
      yield* prebuilds.insert(prebuild(1))
      yield* prebuilds.insert(prebuild(2))
      yield* prebuilds.insert(prebuild(3, { key: "k2" }))
      assert.deepStrictEqual(yield* prebuilds.get("pb-1"), prebuild(1))
      assert.isUndefined(yield* prebuilds.readyFor("k1"), "a making row is never used")
      const end = (n: number) =>
        ({
          state: "ready",
          image: `prbox-prebuild/k1:pb-${n}`,
          volume: `v${n}`,
          sizeBytes: n,
          readyAt: 2000 + n
        }) as const
      assert.isTrue(yield* prebuilds.finish("pb-1", end(1)))
      assert.isTrue(yield* prebuilds.finish("pb-2", end(2)))
      assert.strictEqual((yield* prebuilds.readyFor("k1"))?.id, "pb-2", "the newest ready of its key")
      assert.isUndefined(yield* prebuilds.readyFor("k3"))
      assert.deepStrictEqual(
        (yield* prebuilds.list).map((row) => row.id),
        ["pb-3", "pb-2", "pb-1"]
      )
      yield* prebuilds.delete("pb-2")
      assert.strictEqual((yield* prebuilds.readyFor("k1"))?.id, "pb-1")
    })
  )

  it.effect("a row ends once: a late end after a reconcile's (or of a removed row) changes nothing", () =>
    Effect.gen(function* () {
      const { prebuilds } = yield* openStore(yield* freshStateDir)
      yield* prebuilds.insert(prebuild(1))
      assert.isTrue(yield* prebuilds.finish("pb-1", { state: "failed", error: "x".repeat(2000) }))
      const late = { state: "ready", image: null, volume: "v", sizeBytes: 1, readyAt: 5 } as const
      assert.isFalse(yield* prebuilds.finish("pb-1", late))
      const row = yield* prebuilds.get("pb-1")
      assert.strictEqual(row?.state, "failed")
      assert.strictEqual(row?.error?.length, PREBUILD_ERROR_CHARS, "a stored error is cut")
      assert.isFalse(yield* prebuilds.finish("pb-9", late), "a row that is gone")
    })
  )

  it.effect("usedAt only moves forward", () =>
    Effect.gen(function* () {
      const { prebuilds } = yield* openStore(yield* freshStateDir)
      yield* prebuilds.insert(prebuild(1))
      yield* prebuilds.markUsed("pb-1", 5000)
      yield* prebuilds.markUsed("pb-1", 4000)
      assert.strictEqual((yield* prebuilds.get("pb-1"))?.usedAt, 5000)
    })
  )

  it.effect("a state the store does not know is a decode error, never a row", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      const { prebuilds } = yield* openStore(stateDir)
      yield* prebuilds.insert(prebuild(1))
      const raw = yield* rawDatabase(databaseIn(stateDir))
      raw.prepare("UPDATE prebuilds SET state = 'half' WHERE id = 'pb-1'").run()
      const error = yield* Effect.flip(prebuilds.get("pb-1"))
      assert.strictEqual(error._tag, "RowDecodeError")
    })
  )
})
