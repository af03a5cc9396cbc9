import { Effect, Layer } from "effect"
import { Config } from "../Config.ts"
import { HelperOwner } from "../HelperOwner.ts"
import { Installation } from "../Installation.ts"
import { HELPER_MAKER } from "./docker/HelperLabels.ts"

/** This home's and install's helpers, made by this process (HELPER_MAKER). */
export const layer = Layer.effect(
  HelperOwner,
  Effect.gen(function* () {
    const config = yield* Config
    const install = yield* Installation
    return HelperOwner.of({ home: config.home, install: install.id, maker: HELPER_MAKER })
  })
)
