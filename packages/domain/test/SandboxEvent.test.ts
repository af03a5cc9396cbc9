import { assert, describe, it } from "@effect/vitest"
import { describeEvent, isSettling, SandboxEvent, SandboxId, type SandboxStatus } from "@prbox/domain"
import { Schema } from "effect"

const sandboxId = SandboxId.make("abcdefabcdef")
const changed = (status: SandboxStatus, error: string | null = null): SandboxEvent => ({
  _tag: "StatusChanged",
  seq: 1,
  sandboxId,
  at: 0,
  status,
  error
})
const progress = (line: string): SandboxEvent => ({
  _tag: "Progress",
  seq: 2,
  sandboxId,
  at: 0,
  status: "running",
  line
})

describe("SandboxEvent", () => {
  const settling: ReadonlyArray<readonly [string, SandboxEvent, boolean]> = [
    ["running settles", changed("running"), true],
    ["error settles", changed("error", "boom"), true],
    ["stopped settles", changed("stopped"), true],
    ["starting does not", changed("starting"), false],
    ["stopping does not", changed("stopping"), false],
    // A line that reads like a status change is still only a line.
    ["a progress line never settles", progress("status: running"), false]
  ]
  for (const [name, event, expected] of settling) {
    it(name, () => assert.strictEqual(isSettling(event), expected))
  }

  it("describes without being parsed back", () => {
    assert.strictEqual(describeEvent(changed("error", "boom")), "status: error (boom)")
    assert.strictEqual(describeEvent(changed("running")), "status: running")
    assert.strictEqual(describeEvent(progress("cloning 40%")), "cloning 40%")
  })

  it("round-trips both variants through JSON", () => {
    const codec = Schema.fromJsonString(SandboxEvent)
    for (const event of [changed("error", "boom"), progress("x")]) {
      const text = Schema.encodeSync(codec)(event)
      assert.deepStrictEqual(Schema.decodeUnknownSync(codec)(text), event)
    }
  })
})
