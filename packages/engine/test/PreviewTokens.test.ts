import { assert, describe, it } from "@effect/vitest"
import { previewToken, relayToken } from "../src/previews/node/PreviewTokens.ts"

// Expected values computed independently: printf '<message>' | openssl dgst -sha256 -hmac '<password>'
describe("preview tokens", () => {
  it("are HMAC-SHA256 of a fixed message, keyed by the sandbox's password", () => {
    assert.strictEqual(relayToken("correct horse"), "55c7eb427962ccc350d207822ae1a2fb340ab2198138a270c43090f5b6742b5c")
    assert.strictEqual(
      previewToken("correct horse", "abcdef123456"),
      "dcb19aaebf67dad6723944e6d57bba0c954b541a08323d182bdc3322b18fe57c"
    )
  })

  it("differ per sandbox and per password", () => {
    const tokens = [
      relayToken("correct horse"),
      relayToken("battery staple"),
      previewToken("correct horse", "abcdef123456"),
      previewToken("correct horse", "123456abcdef"),
      previewToken("battery staple", "abcdef123456")
    ]
    assert.strictEqual(new Set(tokens).size, tokens.length)
    for (const token of tokens) assert.match(token, /^[0-9a-f]{64}$/)
  })
})
