import { SandboxEvent, SandboxList, SandboxView } from "@prbox/protocol"
import { Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { sandboxEvent, sandboxList, sandboxView } from "../src/QuickView.ts"

/** What decoding with the protocol's schema gives, as the full CLI prints it (`--json`): the JSON text, or undefined when it fails. */
const bySchema = (schema: Schema.Top, input: unknown): string | undefined => {
  const exit = Schema.decodeUnknownExit(schema as unknown as Schema.Codec<unknown, unknown>)(input)
  return Exit.isSuccess(exit) ? JSON.stringify(exit.value) : undefined
}

const view = {
  id: "abcdefghij12",
  provider: "github",
  host: "github.com",
  account: "me",
  repository: "o/r",
  pullRequest: 7,
  title: "a title",
  sourceBranch: "feature",
  sourceCommit: "0123abcd",
  workspacePath: "/w/abcdefghij12",
  containerId: "c0ffee",
  hostPort: 8080,
  status: "running",
  detail: "code-server is up",
  error: null,
  setupError: null,
  environment: {
    kind: "devcontainer",
    path: ".devcontainer/devcontainer.json",
    image: "img:1",
    imageDigest: null,
    ignored: [{ property: "privileged", detail: "widens the container" }]
  },
  createdAt: 1,
  lastActivityAt: 2,
  stoppedAt: null,
  legacyRetiredAt: null,
  destroyFenced: false,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  engine: null,
  url: "http://127.0.0.1:8080/",
  hasPassword: true,
  workspaceFolder: "/workspaces/repo"
} as const

/** Values of every JSON kind, and the edges of the schemas' checks (ids, ranges, word lists). */
const probes: ReadonlyArray<unknown> = [
  null,
  "",
  "text",
  "ABCDEFGHIJ12",
  "abcdefghij1",
  "paused",
  "svn",
  0,
  -1,
  1,
  1.5,
  65535,
  65536,
  2 ** 53,
  true,
  {},
  [],
  [0],
  [1, 2]
]

type Json = Readonly<Record<string, unknown>>

/** `base`, then for each of its fields: without it, with each probe, and with the field moved last; plus an unknown key. */
const variants = (base: Json): ReadonlyArray<unknown> => [
  base,
  { ...base, unknown: 1 },
  Object.fromEntries(Object.entries(base).reverse()),
  ...Object.keys(base).flatMap((key) => {
    const { [key]: _removed, ...without } = base
    return [without, ...probes.map((probe) => ({ ...base, [key]: probe }))]
  })
]

describe("the fast path's check of the daemon's answers agrees with the protocol's schemas (QuickView)", () => {
  const environments = [
    ...variants(view.environment),
    // The entries of `ignored`: each key missing, probed, out of order, or an unknown one besides.
    ...variants(view.environment.ignored[0]).map((item) => ({ ...view.environment, ignored: [item] })),
    { ...view.environment, ignored: [] }
  ].map((environment) => ({ ...view, environment }))
  const views = [...variants(view), { ...view, environment: null }, ...environments]

  it.each(views.map((input) => [JSON.stringify(input), input]))("SandboxView %s", (_, input) => {
    expect(JSON.stringify(sandboxView(input))).toBe(bySchema(SandboxView, input))
  })

  it("accepts what the schema accepts and refuses what it refuses (both happen above)", () => {
    const verdicts = views.map((input) => sandboxView(input) !== undefined)
    expect(verdicts.filter(Boolean).length).toBeGreaterThan(10)
    expect(verdicts.filter((ok) => !ok).length).toBeGreaterThan(100)
  })

  it.each([
    [[]],
    [[view, { ...view, id: "zyxwvutsrq98" }]],
    [[view, { ...view, status: "paused" }]],
    [view],
    [null],
    ["[]"]
  ])("SandboxList %j", (input) => {
    expect(JSON.stringify(sandboxList(input))).toBe(bySchema(SandboxList, input))
  })

  const statusChanged = {
    _tag: "StatusChanged",
    seq: 3,
    sandboxId: "abcdefghij12",
    at: 5,
    status: "running",
    error: null
  }
  const progress = { _tag: "Progress", seq: 2, sandboxId: "abcdefghij12", at: 4, status: "starting", line: "a line" }
  const events = [
    ...variants(statusChanged),
    ...variants(progress),
    { ...statusChanged, error: "it failed" },
    { ...progress, _tag: "StatusChanged" },
    { ...statusChanged, _tag: "Progress" }
  ]

  it.each(events.map((input) => [JSON.stringify(input), input]))("SandboxEvent %s", (_, input) => {
    expect(JSON.stringify(sandboxEvent(input))).toBe(bySchema(SandboxEvent, input))
  })
})
