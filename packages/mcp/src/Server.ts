import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import type { PrboxClientShape } from "@prbox/client"
import { Effect } from "effect"
import { errorResult, type McpPolicy, type Tool } from "./Tool.ts"
import { pushTool } from "./ToolPush.ts"
import { execTools } from "./ToolsExec.ts"
import { fileTools } from "./ToolsFiles.ts"
import { sandboxTools } from "./ToolsSandbox.ts"

/** The registration table: every tool `prbox mcp` serves, in the order tools/list shows them. */
export const TOOLS: ReadonlyArray<Tool> = [...sandboxTools, ...execTools, ...fileTools]

const INSTRUCTIONS = [
  "prbox runs each pull request in its own Docker sandbox.",
  "Start with sandbox_open (or sandbox_list), then use its id: sandbox_exec runs commands (background: true for long ones, read with sandbox_job),",
  "sandbox_read_file / sandbox_list_files / sandbox_write_file / sandbox_edit_file work on the PR's checkout (paths relative to it),",
  "sandbox_diff shows your changes (against: head) or the PR's own (against: base). sandbox_stop when done.",
  "Errors carry a stable code (`<code>: <message>`, and structuredContent.error.code)."
].join(" ")

/**
 * Arguments that fail a tool's input schema are refused by the SDK before
 * the tool runs, as its own error text. Answered here as every other tool
 * error: code `invalid_input` and the schema's reasons. (The SDK keeps this
 * hook private; its version is pinned and the MCP tests cover the answer.)
 */
const answerBadArgumentsAsInvalidInput = (server: McpServer): void => {
  const hook = server as unknown as { createToolError: (message: string) => CallToolResult }
  hook.createToolError = (message) =>
    errorResult({
      code: "invalid_input",
      message: `${message.replace(/^MCP error -?\d+: /, "")}; fix the arguments as the tool's input schema says`
    })
}

/** Served only when the user's config.json allows it (`"mcp": {"allowPush": true}`). */
export const PUSH_TOOLS: ReadonlyArray<Tool> = [pushTool]

/** An MCP server whose tools call prboxd through `client`; `allowPush`: sandbox_push is among them. */
export const makeServer = (
  client: PrboxClientShape,
  version: string,
  policy: McpPolicy,
  options: { readonly allowPush: boolean } = { allowPush: false }
): McpServer => {
  const server = new McpServer({ name: "prbox", version }, { instructions: INSTRUCTIONS })
  for (const tool of [...TOOLS, ...(options.allowPush ? PUSH_TOOLS : [])]) tool.register(server, client, policy)
  answerBadArgumentsAsInvalidInput(server)
  return server
}

/**
 * Serves MCP on this process's stdin/stdout until the client closes stdin.
 * Only JSON-RPC goes to stdout; anything else this process says goes to stderr.
 */
export const serveStdio = (client: PrboxClientShape, version: string, policy: McpPolicy): Effect.Effect<void> =>
  Effect.flatMap(policy.allowPush, (allowPush) => serveWith(client, version, policy, allowPush))

const serveWith = (client: PrboxClientShape, version: string, policy: McpPolicy, allowPush: boolean) =>
  Effect.callback<void>((resume) => {
    const server = makeServer(client, version, policy, { allowPush })
    const transport = new StdioServerTransport()
    transport.onclose = () => resume(Effect.void)
    process.stdin.once("end", () => {
      void server.close()
    })
    server.connect(transport).catch((error: unknown) => {
      process.stderr.write(
        `prbox mcp: cannot serve on stdio: ${error instanceof Error ? error.message : String(error)}\n`
      )
      resume(Effect.void)
    })
    // Closing only ends the transport; a failure to close leaves nothing to undo.
    return Effect.tryPromise(() => server.close()).pipe(Effect.ignore)
  })
