import { assert, describe, it } from "@effect/vitest"
import { cappedSink } from "../src/node/ExecOutput.ts"

describe("cappedSink", () => {
  it("keeps copies of at most its limit: the reads it was given may be refilled afterwards", () => {
    const sink = cappedSink(6)
    const reads = [Buffer.from("abcd"), Buffer.from("efgh"), Buffer.from("ijkl")]
    for (const read of reads) sink.add(read)
    for (const read of reads) read.fill("*")
    assert.strictEqual(sink.text(), "abcdef")
    assert.isTrue(sink.truncated())
  })
})
