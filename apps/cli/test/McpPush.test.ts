import { execFileSync } from "node:child_process"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SandboxView } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { callTool, connectPrboxMcp } from "../../../scripts/testing/mcp-client.ts"
import { decode, makeHome, prbox, tearDown, writeConfig } from "./support.ts"

// The SDK's own client spawns `prbox mcp` (the real CLI) against a real daemon and Docker.

let home: string
let remote: TestRemote
const clients: Array<Client> = []
const config = { image: healthzGitImage(), git: { name: "Agent Host", email: "agent@prbox.invalid" } }

const connect = async (): Promise<Client> => {
  const client = await connectPrboxMcp(home)
  clients.push(client)
  return client
}

const toolNames = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name)

const feature = () =>
  execFileSync("git", [`--git-dir=${remote.path}`, "rev-parse", "refs/heads/feature"], { encoding: "utf8" }).trim()

beforeAll(() => {
  home = makeHome("mcp-push", config)
  remote = makeRemote(home)
  execFileSync("git", [`--git-dir=${remote.path}`, "update-ref", "refs/heads/feature", remote.pr1])
})

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()))
  await tearDown(home)
})

describe("sandbox_push through the SDK's client", () => {
  it("is not served without config.json's mcp.allowPush; with it, previews without confirm and pushes with it", async () => {
    expect(await toolNames(await connect())).not.toContain("sandbox_push")

    writeConfig(home, { ...config, mcp: { allowPush: true } })
    const client = await connect()
    expect(await toolNames(client)).toContain("sandbox_push")

    const opened = await prbox(home, ["open", remote.path, "--pr", "1", "--json"])
    expect(opened.code, opened.stderr).toBe(0)
    const { id } = decode(SandboxView, opened.stdout)
    const commit = await prbox(home, [
      "exec",
      id,
      "--",
      "sh",
      "-c",
      "echo x > x.txt && git add x.txt && git commit -q -m agent-fix"
    ])
    expect(commit.code, commit.stderr).toBe(0)

    const preview = await callTool(client, "sandbox_push", { id, to: "feature" })
    expect(preview.isError, preview.text).toBe(false)
    expect(preview.structured).toMatchObject({ sandbox: id, branch: "feature", pushed: false, refused: null })
    expect(preview.structured.commits).toMatchObject([
      { subject: "agent-fix", author: "Agent Host <agent@prbox.invalid>", files: ["x.txt"] }
    ])
    expect(feature()).toBe(remote.pr1)

    const pushed = await callTool(client, "sandbox_push", {
      id,
      to: "feature",
      confirm: true,
      tip: preview.structured.tip
    })
    expect(pushed.isError, pushed.text).toBe(false)
    expect(pushed.structured).toMatchObject({ pushed: true, refused: null })
    expect(feature()).toBe(preview.structured.tip)

    const again = await callTool(client, "sandbox_push", { id, to: "feature", confirm: true })
    expect(again.isError, again.text).toBe(false)
    expect(again.structured).toMatchObject({ pushed: false, refused: { kind: "no-new-commits" } })

    // Turned off again: the running server refuses the call.
    writeConfig(home, config)
    const off = await callTool(client, "sandbox_push", { id, to: "feature" })
    expect(off.isError).toBe(true)
    expect(off.text).toContain("allowPush")
  })
})
