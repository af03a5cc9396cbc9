import { describe, expect, it } from "@effect/vitest"
import { decideLeftoverHelper, type HelperFacts } from "../src/index.ts"

const judge = { home: "/h/.prbox", install: "i1", maker: "now" }

const left = (over: Partial<HelperFacts> = {}): HelperFacts => ({
  maker: "dead",
  home: "/h/.prbox",
  install: "i1",
  sandboxLabelled: false,
  state: "created",
  ...over
})

describe("decideLeftoverHelper", () => {
  it.each([
    { name: "a never-started helper of a dead process: removed", facts: left(), want: "Remove" },
    { name: "an ended helper (a copy's) of a dead process: removed", facts: left({ state: "exited" }), want: "Remove" },
    { name: "a helper labelled before makers had ids (1): removed", facts: left({ maker: "1" }), want: "Remove" },
    { name: "this process's own helper: kept", facts: left({ maker: "now" }), want: "Keep" },
    { name: "a running helper: kept", facts: left({ state: "other" }), want: "Keep" },
    { name: "not a helper: kept", facts: left({ maker: undefined }), want: "Keep" },
    { name: "another home's: kept", facts: left({ home: "/other/.prbox" }), want: "Keep" },
    { name: "no home label: kept", facts: left({ home: undefined }), want: "Keep" },
    { name: "another install's (same home path): kept", facts: left({ install: "i2" }), want: "Keep" },
    { name: "no install label: kept", facts: left({ install: undefined }), want: "Keep" },
    { name: "a sandbox's or pool's label: kept", facts: left({ sandboxLabelled: true }), want: "Keep" }
  ] as const)("$name", ({ facts, want }) => {
    expect(decideLeftoverHelper(facts, judge)).toBe(want)
  })
})
