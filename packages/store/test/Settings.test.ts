import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SettingKey } from "../src/Settings.ts"
import { databaseIn, freshStateDir, newSandbox, openStore, rawDatabase } from "./support.ts"

describe("settings", () => {
  it.effect("an unset key reads as undefined; a set one reads back; setting again replaces it", () =>
    Effect.gen(function* () {
      const { settings } = yield* openStore(yield* freshStateDir)
      assert.strictEqual(yield* settings.get(SettingKey.previewPort), undefined)
      yield* settings.set(SettingKey.previewPort, "47100")
      yield* settings.set("other", "x")
      assert.strictEqual(yield* settings.get(SettingKey.previewPort), "47100")
      yield* settings.set(SettingKey.previewPort, "47101")
      assert.strictEqual(yield* settings.get(SettingKey.previewPort), "47101")
      assert.strictEqual(yield* settings.get("other"), "x")
      assert.strictEqual(yield* settings.get("PREVIEWPORT"), undefined)
    })
  )

  it.effect("a value survives closing and reopening the database", () =>
    Effect.gen(function* () {
      const stateDir = yield* freshStateDir
      yield* Effect.scoped(
        Effect.flatMap(openStore(stateDir), ({ settings }) => settings.set(SettingKey.previewPort, "47100"))
      )
      const raw = yield* rawDatabase(databaseIn(stateDir), { readonly: true })
      assert.deepStrictEqual(raw.prepare("SELECT key, value FROM settings").all(), [
        { key: "previewPort", value: "47100" }
      ])
      const { settings } = yield* openStore(stateDir)
      assert.strictEqual(yield* settings.get(SettingKey.previewPort), "47100")
    })
  )

  it.effect("settings and the repository share one connection", () =>
    Effect.gen(function* () {
      const { repo, settings } = yield* openStore(yield* freshStateDir)
      yield* repo.insert(newSandbox(1))
      const before = yield* repo.generation
      // A commit through another connection moves the generation (SQLite's data_version); ours does not.
      yield* settings.set(SettingKey.previewPort, "47100")
      assert.strictEqual(yield* repo.generation, before)
      assert.strictEqual((yield* repo.findAll()).length, 1)
    })
  )
})
