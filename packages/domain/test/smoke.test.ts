import { assert, it } from "@effect/vitest"
import { placeholder } from "@prbox/domain"
import { Effect } from "effect"

it.effect("smoke", () => Effect.sync(() => assert.strictEqual(placeholder, 1)))
