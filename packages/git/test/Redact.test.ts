import { assert, describe, it } from "@effect/vitest"
import { hasUrlCredentials, redactCredentials } from "../src/index.ts"
import { stderrTail } from "../src/Redact.ts"

describe("redactCredentials", () => {
  it.each([
    ["fatal: unable to access 'https://user:hunter2@example.com/r.git/'", "https://***@example.com/r.git/"],
    ["https://ghp_abc123@github.com/o/r.git", "https://***@github.com/o/r.git"],
    ["git:hunter2@example.com:r.git", "***@example.com:r.git"],
    ["GET /r.git/info/refs?service=git-upload-pack&access_token=hunter2", "access_token=***"],
    ["https://example.com/r.git?private_token=hunter2", "private_token=***"],
    ["=> Send header: Authorization: Basic aHVudGVyMg==", "Authorization: Basic ***"]
  ])("masks %s", (input, expected) => {
    const output = redactCredentials(input)
    assert.include(output, expected)
    assert.notInclude(output, "hunter2")
    assert.notInclude(output, "ghp_abc123")
    assert.notInclude(output, "aHVudGVyMg")
  })

  it("leaves ordinary text alone", () => {
    const text = "fatal: couldn't find remote ref refs/pull/9/head"
    assert.strictEqual(redactCredentials(text), text)
  })
})

describe("hasUrlCredentials", () => {
  it.each([
    ["https://user:pass@example.com/r.git", true],
    ["https://token@example.com/r.git", true],
    ["ssh://git:pass@example.com/r.git", true],
    ["ssh://git@example.com/r.git", false],
    ["git@github.com:o/r.git", false],
    ["https://github.com/o/r.git", false],
    ["codecommit::us-east-1://profile@repo", false]
  ])("%s: %s", (url, expected) => {
    assert.strictEqual(hasUrlCredentials(url), expected)
  })
})

describe("stderrTail", () => {
  it("keeps the final state of progress lines and the last lines only", () => {
    const stderr = ["one", "two", "Receiving objects:  50%\rReceiving objects: 100%, done.", "", "fatal: boom"].join(
      "\n"
    )
    assert.strictEqual(stderrTail(stderr, 3), "two\nReceiving objects: 100%, done.\nfatal: boom")
  })
})
