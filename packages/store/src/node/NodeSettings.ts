import { Effect, Layer, Result } from "effect"
import { Settings } from "../Settings.ts"
import { SqliteDatabase } from "./SqliteDatabase.ts"

/** The settings table, on the store's connection; each call is one statement. */
export const layer: Layer.Layer<Settings, never, SqliteDatabase> = Layer.effect(
  Settings,
  Effect.gen(function* () {
    const {
      db,
      transactions: { run }
    } = yield* SqliteDatabase
    const select = db.prepare<[string], string>("SELECT value FROM settings WHERE key = ?").pluck()
    const upsert = db.prepare<[string, string]>(
      "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
    )
    return Settings.of({
      get: Effect.fn("Settings.get")(function* (key: string) {
        return yield* run("getSetting", () => Result.succeed(select.get(key)))
      }),
      set: Effect.fn("Settings.set")(function* (key: string, value: string) {
        yield* run("setSetting", () => Result.succeed(void upsert.run(key, value)))
      })
    })
  })
)
