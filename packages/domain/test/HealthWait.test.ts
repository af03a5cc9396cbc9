import { describe, expect, it } from "vitest"
import { healthProbePause } from "../src/HealthWait.ts"

describe("healthProbePause", () => {
  it.each([
    ["at once", 0, 20],
    ["during code-server's usual start", 1_200, 20],
    ["just before the fast window ends", 14_999, 20],
    ["at the end of the fast window", 15_000, 500],
    ["a long start", 90_000, 500]
  ] as const)("%s", (_name, elapsedMs, pauseMs) => {
    expect(healthProbePause(elapsedMs)).toBe(pauseMs)
  })
})
