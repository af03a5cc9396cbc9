import { assert, describe, it } from "@effect/vitest"
import { capabilitiesToDrop, DROPPED_CAPABILITIES } from "@prbox/domain"

describe("the capabilities a sandbox's container drops", () => {
  const cases: ReadonlyArray<{
    readonly added: ReadonlyArray<string> | undefined
    readonly dropped: ReadonlyArray<string>
  }> = [
    { added: undefined, dropped: ["MKNOD", "NET_RAW", "SETFCAP"] },
    { added: [], dropped: ["MKNOD", "NET_RAW", "SETFCAP"] },
    // A trusted repository that adds one back gets it, in any of Docker's spellings.
    { added: ["MKNOD"], dropped: ["NET_RAW", "SETFCAP"] },
    { added: ["cap_net_raw"], dropped: ["MKNOD", "SETFCAP"] },
    { added: ["CAP_SETFCAP", "SYS_PTRACE"], dropped: ["MKNOD", "NET_RAW"] },
    { added: ["ALL"], dropped: [] },
    // Adding something else leaves the drops as they are.
    { added: ["SYS_ADMIN"], dropped: ["MKNOD", "NET_RAW", "SETFCAP"] }
  ]
  for (const { added, dropped } of cases) {
    it(`adds ${JSON.stringify(added)}: drops ${dropped.join(", ") || "nothing"}`, () => {
      assert.deepStrictEqual(capabilitiesToDrop(added), dropped)
    })
  }

  it("always names MKNOD and SETFCAP: a device node or a file capability in the workspace would reach the host", () => {
    assert.includeMembers([...DROPPED_CAPABILITIES], ["MKNOD", "SETFCAP"])
  })
})
