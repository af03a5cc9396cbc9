import { randomBytes } from "node:crypto"
import { SettingKey, Settings } from "@prbox/store"
import { Effect, Layer } from "effect"
import { mapStoreErrors } from "../Errors.ts"
import { Installation } from "../Installation.ts"

/** The install id kept in the home's database; the first start of a home makes it. */
export const layer = Layer.effect(
  Installation,
  Effect.gen(function* () {
    const settings = yield* Settings
    const kept = yield* settings.get(SettingKey.installId).pipe(mapStoreErrors("settings.get"))
    if (kept !== undefined && kept !== "") return Installation.of({ id: kept })
    const id = randomBytes(12).toString("hex")
    yield* settings.set(SettingKey.installId, id).pipe(mapStoreErrors("settings.set"))
    return Installation.of({ id })
  })
)
