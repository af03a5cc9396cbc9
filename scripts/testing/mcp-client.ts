import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js"
import { ERROR_META_KEY } from "@prbox/mcp"

// The MCP SDK's own client of `prbox mcp` (the real CLI, spawned over stdio),
// as the CLI's tests and `pnpm bench mcp` drive it.

const CLI_MAIN = fileURLToPath(new URL("../../apps/cli/src/main.ts", import.meta.url))

/** A client connected to a fresh `prbox mcp` on `home` (its stderr piped, or shown with "inherit"). */
export const connectPrboxMcp = async (home: string, stderr: "pipe" | "inherit" = "pipe"): Promise<Client> => {
  const client = new Client({ name: "prbox-test", version: "0.0.0" })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI_MAIN, "mcp"],
      env: { ...(process.env as Record<string, string>), PRBOX_HOME: home },
      stderr
    })
  )
  return client
}

export interface Called {
  readonly isError: boolean
  readonly text: string
  // biome-ignore lint/suspicious/noExplicitAny: a tool's structured result, checked field by field.
  readonly structured: any
  /** An error result's code and message (`_meta["dev.prbox/error"]`). */
  readonly error: { readonly code: string; readonly message: string } | undefined
}

/** Calls a tool (2 minutes at most unless `options` says otherwise) and returns its result's parts. */
export const callTool = async (
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: RequestOptions = {}
): Promise<Called> => {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000, ...options })
  const content = result.content as Array<{ type: string; text?: string }>
  return {
    isError: result.isError === true,
    text: content.map((part) => part.text ?? "").join("\n"),
    structured: result.structuredContent,
    error: result._meta?.[ERROR_META_KEY] as Called["error"]
  }
}
