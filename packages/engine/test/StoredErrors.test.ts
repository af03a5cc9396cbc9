import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { RuntimeError } from "../src/index.ts"
import { openSettled, withEngine } from "./harness.ts"

describe("stored errors", () => {
  it.live("a failure with a long message is stored cut to 500 characters", () =>
    withEngine(
      {
        runtime: (real) => ({
          ...real,
          provision: () => Effect.fail(new RuntimeError({ operation: "container.create", detail: "x".repeat(2_000) }))
        })
      },
      ({ remote }) =>
        Effect.gen(function* () {
          const row = yield* openSettled(remote.path, 1)
          assert.strictEqual(row.status, "error")
          assert.strictEqual(row.error, `container.create: ${"x".repeat(500 - "container.create: ".length)}`)
        })
    )
  )
})
