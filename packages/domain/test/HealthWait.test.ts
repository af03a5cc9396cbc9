import { describe, expect, it } from "vitest"
import { healthProbePause, isCodeServerListeningLine } from "../src/HealthWait.ts"

describe("healthProbePause", () => {
  it.each([
    ["at once, not yet heard", 0, false, 100],
    ["at once, heard", 0, true, 20],
    ["during code-server's usual start, heard", 1_200, true, 20],
    ["during code-server's usual start, not heard", 1_200, false, 100],
    ["just before the fast window ends", 14_999, true, 20],
    ["at the end of the fast window, heard", 15_000, true, 500],
    ["at the end of the fast window, not heard", 15_000, false, 500],
    ["a long start", 90_000, false, 500]
  ] as const)("%s", (_name, elapsedMs, heard, pauseMs) => {
    expect(healthProbePause(elapsedMs, heard)).toBe(pauseMs)
  })
})

describe("isCodeServerListeningLine", () => {
  it.each([
    ["code-server's line", "[2026-12-01T03:00:00.000Z] info  HTTP server listening on http://0.0.0.0:8080/", true],
    ["with a certificate", "[2026-12-01T03:00:00.000Z] info  HTTPS server listening on https://0.0.0.0:8080/", true],
    ["its session server", "[2026-12-01T03:00:00.000Z] info  Session server listening on /tmp/x.sock", false],
    ["the stand-in's own line", "healthz: listening on 8080", false],
    ["a word ending in HTTP", "XHTTP server listening on", false]
  ] as const)("%s", (_name, line, expected) => {
    expect(isCodeServerListeningLine(line)).toBe(expected)
  })
})
