import { execFileSync } from "node:child_process"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, pushPullRequest, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { type Called, callTool as call, connectPrboxMcp } from "../../../scripts/testing/mcp-client.ts"
import { previewHome } from "./preview-support.ts"
import { containersOfHome, prbox, tearDown, until, writeConfig } from "./support.ts"

// The SDK's own client spawns `prbox mcp` (the real CLI) over stdio, against a
// real daemon (started by the first server) and Docker, on a PR of a local bare
// remote. The sandboxes run the code-server test image: sandbox_diff needs git in it.

const TOOL_NAMES = [
  "sandbox_open",
  "sandbox_list",
  "sandbox_status",
  "sandbox_logs",
  "sandbox_stop",
  "sandbox_exec",
  "sandbox_job",
  "sandbox_read_file",
  "sandbox_list_files",
  "sandbox_write_file",
  "sandbox_edit_file",
  "sandbox_diff"
]

let home: string
let remote: TestRemote
const clients: Array<Client> = []
let id = ""

const connect = async (): Promise<Client> => {
  const client = await connectPrboxMcp(home)
  clients.push(client)
  return client
}

/** The client the first test connected (later tests share it). */
const firstClient = (): Client => {
  const [client] = clients
  if (client === undefined) throw new Error("no MCP client: the first test did not connect")
  return client
}

/** A tool error's code, from both its text and its structured form (they must agree). */
const errorCode = (called: Called): string => {
  expect(called.isError, called.text).toBe(true)
  const code = called.error?.code ?? "(none)"
  expect(called.text.startsWith(`${code}: `), called.text).toBe(true)
  return code
}

const containerProcesses = (): string => {
  const [container] = containersOfHome(home, true)
  return execFileSync("docker", ["exec", container ?? "", "sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"], {
    encoding: "utf8"
  })
}

beforeAll(() => {
  home = previewHome("mcp")
  remote = makeRemote(home)
  pushPullRequest(remote.path, 7, {
    "src/app.txt": "one\ntwo\nthree\n",
    escape: { link: "/etc/passwd" },
    "up/out": { link: "../../../../etc" }
  })
})

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()))
  await tearDown(home)
})

describe("prbox mcp through the SDK's client", () => {
  it("lists exactly the issue's tools, each with a description, schemas and annotations", async () => {
    const client = await connect()
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort())
    for (const tool of tools) {
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(40)
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type, tool.name).toBe("object")
      expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe("boolean")
      expect(typeof tool.annotations?.destructiveHint, tool.name).toBe("boolean")
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    const exec = byName.get("sandbox_exec")?.inputSchema.properties as Record<string, Record<string, unknown>>
    expect(Object.keys(exec)).toEqual(
      expect.arrayContaining(["id", "argv", "command", "cwd", "env", "timeoutMs", "maxOutputBytes", "background"])
    )
    expect(exec.timeoutMs?.maximum).toBe(600_000)
    expect(byName.get("sandbox_open")?.inputSchema.required).toEqual(["input"])
    expect(byName.get("sandbox_read_file")?.annotations?.readOnlyHint).toBe(true)
    expect(byName.get("sandbox_stop")?.annotations?.destructiveHint).toBe(true)
  })

  it("refuses a repository on this machine until config.json allows it (read afresh for each call)", async () => {
    const client = clients[0] ?? (await connect())
    for (const input of [remote.path, `file://${remote.path}`, "../../somewhere-else"]) {
      const refused = await call(client, "sandbox_open", { input, pr: 7 })
      expect(errorCode(refused)).toBe("invalid_input")
      expect(refused.text).toContain('"mcp": {"allowLocalPaths": true}')
    }
    expect(containersOfHome(home, true)).toHaveLength(0)
    writeConfig(home, { image: imageTag(codeServerImage), healthTimeoutSeconds: 120, mcp: { allowLocalPaths: true } })
  })

  it("two clients opening the same PR concurrently get one sandbox, with progress on the way", async () => {
    const first = clients[0] ?? (await connect())
    const second = await connect()
    const progress: Array<string> = []
    const open = (client: Client, options: RequestOptions) =>
      call(client, "sandbox_open", { input: remote.path, pr: 7 }, { resetTimeoutOnProgress: true, ...options })
    const [a, b] = await Promise.all([
      open(first, { onprogress: (note) => progress.push(note.message ?? "") }),
      open(second, {})
    ])
    expect(a.isError, a.text).toBe(false)
    expect(b.isError, b.text).toBe(false)
    expect(a.structured.id).toBe(b.structured.id)
    expect(a.structured).toMatchObject({ status: "running", pullRequest: 7, error: null })
    expect(a.structured.headSha).toMatch(/^[0-9a-f]{40}$/)
    expect(a.structured.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    // The first notification comes seconds before the result. The last ones may not be seen: the SDK's
    // client handles a notification a microtask late, and drops it when the result came in the same read.
    expect(progress[0]).toMatch(/^sandbox [a-z0-9]{12} is [a-z]+$/)
    expect(progress.length).toBeGreaterThan(1)
    expect(containersOfHome(home)).toHaveLength(1)
    id = a.structured.id
    const listed = await call(first, "sandbox_list", {})
    expect(listed.structured.sandboxes.map((sandbox: { id: string }) => sandbox.id)).toEqual([id])
    // The code-server password is the user's: no tool result carries it.
    const password = (await prbox(home, ["password", id])).stdout.trim()
    expect(password.length).toBeGreaterThan(16)
    const status = await call(first, "sandbox_status", { id })
    for (const result of [a, b, listed, status]) {
      expect(JSON.stringify(result)).not.toContain(password)
    }
  })

  it("refuses bad arguments and unknown sandboxes with stable codes", async () => {
    const client = firstClient()
    expect(errorCode(await call(client, "sandbox_exec", { id }))).toBe("invalid_input")
    expect(errorCode(await call(client, "sandbox_exec", { id, argv: ["true"], timeoutMs: 600_001 }))).toBe(
      "invalid_input"
    )
    expect(errorCode(await call(client, "sandbox_status", { id: "nosuchsandbx" }))).toBe("not_found")
    const status = await call(client, "sandbox_status", { id })
    expect(status.structured).toMatchObject({ id, status: "running" })
  })

  it("exec: a non-zero exit is a result; 5 MB of output keeps its head and tail", async () => {
    const client = firstClient()
    const failed = await call(client, "sandbox_exec", { id, command: "echo out; echo err >&2; exit 3" })
    expect(failed.isError).toBe(false)
    expect(failed.structured).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false })
    const big = await call(client, "sandbox_exec", {
      id,
      command: "echo FIRST; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo LAST"
    })
    expect(big.structured.truncated).toBe(true)
    expect(big.structured.exitCode).toBe(0)
    const stdout = big.structured.stdout as string
    expect(stdout.length).toBeLessThan(40 * 1024)
    expect(stdout.startsWith("FIRST\n")).toBe(true)
    expect(stdout.trimEnd().endsWith("LAST")).toBe(true)
  })

  it("exec past its timeout is killed: timedOut, and its processes are gone from the container", async () => {
    const client = firstClient()
    const slept = await call(client, "sandbox_exec", {
      id,
      command: "sleep 1000.5 & sleep 1000.123",
      timeoutMs: 1000
    })
    expect(slept.isError, slept.text).toBe(false)
    expect(slept.structured).toMatchObject({ timedOut: true, exitCode: null })
    expect(containerProcesses()).not.toMatch(/1000\.(123|5)/)
  })

  it("a background job's output is read in three chunks, then its exit status", async () => {
    const client = firstClient()
    const started = await call(client, "sandbox_exec", {
      id,
      command: "echo line1; echo line2; echo line3",
      background: true
    })
    expect(started.isError, started.text).toBe(false)
    const jobId = started.structured.jobId as string
    expect(jobId).toMatch(/^j-[0-9a-f]{8}$/)
    await until("the job to end", async () => {
      const read = await call(client, "sandbox_job", { id, jobId })
      return read.structured.status !== "running"
    })
    const chunks: Array<string> = []
    let offset = 0
    let last: Called | undefined
    for (let index = 0; index < 3; index++) {
      last = await call(client, "sandbox_job", { id, jobId, offset, maxBytes: 6 })
      chunks.push(last.structured.output)
      offset = last.structured.nextOffset
    }
    expect(chunks).toEqual(["line1\n", "line2\n", "line3\n"])
    expect(last?.structured).toMatchObject({ status: "exited", exitCode: 0, more: false, nextOffset: 18 })
  })

  it("reads, edits and writes files, and sandbox_diff shows the changes", async () => {
    const client = firstClient()
    const read = await call(client, "sandbox_read_file", { id, path: "src/app.txt", startLine: 2, endLine: 2 })
    expect(read.structured).toMatchObject({ content: "two\n", totalLines: 3, binary: false })
    const edited = await call(client, "sandbox_edit_file", { id, path: "src/app.txt", search: "two", replace: "TWO" })
    expect(edited.structured).toMatchObject({ occurrence: 1, occurrences: 1 })
    const written = await call(client, "sandbox_write_file", { id, path: "notes/new.txt", content: "hello\n" })
    expect(written.structured).toMatchObject({ created: true, bytes: 6 })
    const again = await call(client, "sandbox_read_file", { id, path: "src/app.txt" })
    expect(again.structured.content).toBe("one\nTWO\nthree\n")
    const listing = await call(client, "sandbox_list_files", { id, path: "notes" })
    expect(listing.structured.entries).toContainEqual({ path: "notes/new.txt", type: "file", size: 6 })
    const diff = await call(client, "sandbox_diff", { id, against: "head" })
    expect(diff.isError, diff.text).toBe(false)
    expect(diff.structured.diff).toContain("-two")
    expect(diff.structured.diff).toContain("+TWO")
    expect(diff.structured.diff).toContain("+hello")
    const base = await call(client, "sandbox_diff", { id, against: "base", stat: true })
    expect(base.isError, base.text).toBe(false)
    expect(base.structured.diff).toContain("src/app.txt")
  })

  it("refuses paths that leave the workspace, without showing what is there", async () => {
    const client = firstClient()
    for (const path of ["../../etc/passwd", "/etc/passwd", "escape", "up/out/passwd"]) {
      const refused = await call(client, "sandbox_read_file", { id, path })
      expect(errorCode(refused), path).toBe("invalid_path")
      expect(refused.text).not.toContain("root:")
    }
    expect(errorCode(await call(client, "sandbox_write_file", { id, path: "../x", content: "x" }))).toBe("invalid_path")
    expect(errorCode(await call(client, "sandbox_exec", { id, argv: ["true"], cwd: "../.." }))).toBe("invalid_path")
  })

  it("after sandbox_stop, later calls are refused as not_running", async () => {
    const client = firstClient()
    const stopped = await call(client, "sandbox_stop", { id })
    expect(stopped.structured).toEqual({ id, status: "stopped" })
    const exec = await call(client, "sandbox_exec", { id, argv: ["true"] })
    expect(errorCode(exec)).toBe("not_running")
    expect(exec.text).toContain("sandbox_open")
    expect(errorCode(await call(client, "sandbox_read_file", { id, path: "src/app.txt" }))).toBe("not_running")
  })
})
