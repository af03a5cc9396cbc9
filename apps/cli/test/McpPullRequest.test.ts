import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writePullRequestFields } from "../../../packages/store/test/pull-request-rows.ts"
import { callTool as call, connectPrboxMcp } from "../../../scripts/testing/mcp-client.ts"
import { makeHome, seedEndedRows, tearDown } from "./support.ts"

// What the hosting service said of a PR, through the SDK's own client of `prbox mcp` (the real CLI, a real
// daemon): the rows are written into the SQLite file the daemon opens, no container is made. The client
// checks each structured result against the tool's output schema.

let home: string
let client: Client

beforeAll(async () => {
  home = makeHome("mcp-pr")
  await seedEndedRows(home, [
    ["mcppr0000001", 11],
    ["mcppr0000002", 12]
  ])
  writePullRequestFields(home, "mcppr0000001", {
    title: "Fix the parser\u001b[2J\nfor good",
    author: "octocat",
    pullRequestState: "merged",
    baseRef: "main",
    closedSeenAt: 5_000
  })
  client = await connectPrboxMcp(home)
}, 120_000)

afterAll(async () => {
  await client?.close()
  await tearDown(home)
})

describe("the sandbox tools say what the hosting service said of the PR", () => {
  it("sandbox_list: title, author, state and base branch; null while unknown", async () => {
    const listed = await call(client, "sandbox_list", { all: true })
    expect(listed.isError, listed.text).toBe(false)
    const byId = new Map(listed.structured.sandboxes.map((sandbox: { id: string }) => [sandbox.id, sandbox]))
    expect(byId.get("mcppr0000001")).toMatchObject({
      pullRequest: 11,
      title: "Fix the parser [2J for good",
      author: "octocat",
      pullRequestState: "merged",
      baseRef: "main",
      status: "error"
    })
    expect(byId.get("mcppr0000002")).toMatchObject({ title: null, author: null, pullRequestState: null, baseRef: null })
    expect(listed.text).toContain('mcppr0000001 o/r#11 "Fix the parser [2J for good" error · merged (error: seeded)')
    expect(listed.text).toContain("mcppr0000002 o/r#12 error (error: seeded)")
  })

  it("sandbox_status: the same fields for one sandbox", async () => {
    const status = await call(client, "sandbox_status", { id: "mcppr0000001" })
    expect(status.isError, status.text).toBe(false)
    expect(status.structured).toMatchObject({ title: "Fix the parser [2J for good", pullRequestState: "merged" })
    expect(status.text).not.toContain("\u001b")
  })
})
