import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { ApiErrors, ErrorCodes, ExitCode, exitCodeOf } from "../src/index.ts"

describe("the API errors' table", () => {
  it("has one row per API error, and each error's HTTP status is its row's", () => {
    expect(ApiErrors.map((errorClass) => errorClass.identifier).sort()).toEqual(Object.keys(ErrorCodes).sort())
    for (const errorClass of ApiErrors) {
      const row = ErrorCodes[errorClass.identifier as keyof typeof ErrorCodes]
      expect(errorClass.ast.annotations?.httpApiStatus, errorClass.identifier).toBe(row.httpStatus)
    }
  })

  it("gives the exit codes the README lists", () => {
    const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
    const listed = /Exit codes are listed in `prbox --help` \(([^)]*)\)/.exec(readme)?.[1] ?? ""
    const readmeCodes = [...listed.matchAll(/(\d+) [^,]+/g)].map((match) => Number(match[1]))
    expect(readmeCodes.sort((a, b) => a - b)).toEqual(Object.values(ExitCode).sort((a, b) => a - b))
    const codes = Object.fromEntries(Object.keys(ErrorCodes).map((tag) => [tag, exitCodeOf(tag)]))
    expect(codes).toEqual({
      NotFound: 3,
      Ambiguous: 3,
      Conflict: 4,
      UpdateRefused: 4,
      PushRefused: 4,
      InvalidPrRef: 2,
      InvalidDevcontainer: 2,
      InvalidConfig: 7,
      DockerUnavailable: 6,
      GitFailure: 1,
      Busy: 8,
      BadRequest: 2,
      PayloadTooLarge: 2,
      InvalidPath: 2,
      TooLarge: 2,
      NotAvailable: 1,
      Internal: 1
    })
  })

  it("answers 1 for a tag that is not an API error", () => {
    expect(exitCodeOf("SomethingElse")).toBe(1)
    expect(exitCodeOf("toString")).toBe(1)
  })
})
