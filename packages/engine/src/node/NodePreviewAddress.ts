import { createServer } from "node:net"
import { Settings } from "@prbox/store"
import { Effect, Layer } from "effect"
import { Config } from "../Config.ts"
import { mapStoreErrors } from "../Errors.ts"
import { PreviewAddress } from "../PreviewAddress.ts"
import { freePort } from "./docker/FreePort.ts"

const KEY = "previewPort"

/** Whether nothing listens on 127.0.0.1:`port` now. */
const isFree = (port: number) =>
  Effect.callback<boolean>((resume) => {
    const probe = createServer()
    probe.once("error", () => resume(Effect.succeed(false)))
    probe.listen(port, "127.0.0.1", () => probe.close(() => resume(Effect.succeed(true))))
  })

/**
 * The preview port: config.json's `previewPort` when set (a taken one fails
 * the daemon's start, saying so); else the one kept in the database; else (or
 * when the kept one is taken now) a free one, kept from then on.
 */
export const layer = Layer.effect(
  PreviewAddress,
  Effect.gen(function* () {
    const settings = yield* Settings
    // An invalid config.json is reported by every open; previews then use the kept port.
    const configured = yield* (yield* Config).load.pipe(
      Effect.map((config) => config.previewPort),
      Effect.orElseSucceed(() => undefined)
    )
    if (configured !== undefined) return { port: configured }
    const kept = Number(yield* settings.get(KEY).pipe(mapStoreErrors("settings.get")))
    if (Number.isInteger(kept) && kept > 0 && (yield* isFree(kept))) return { port: kept }
    const port = yield* freePort(new Set())
    yield* settings.set(KEY, String(port)).pipe(mapStoreErrors("settings.set"))
    return { port }
  })
)
