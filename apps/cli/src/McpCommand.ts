import { serveStdio } from "@prbox/mcp"
import { Command } from "effect/cli"
import { needsDaemon } from "./Params.ts"

/** What an MCP client's configuration says to run this server (the README shows the same). */
export const MCP_CLIENT_CONFIG = `{
    "mcpServers": {
      "prbox": { "command": "prbox", "args": ["mcp"] }
    }
  }`

/** `prbox mcp`: the MCP server on stdio, a client of prboxd (started when it is not running). */
export const mcpCommand = (version: string) =>
  Command.make(
    "mcp",
    {},
    // Failures (prboxd cannot be started) are one line on stderr: stdout is the protocol's.
    () => needsDaemon((client) => serveStdio(client, version))({ json: false })
  ).pipe(
    Command.withDescription(
      [
        "Serve MCP on stdin/stdout for coding agents: tools to open a PR's sandbox, run commands (bounded, killable,",
        "  or in the background), read, list, write and edit its files, see its diff, its log, and stop it.",
        "  Starts prboxd when it is not running. Only JSON-RPC goes to stdout; notices go to stderr.",
        "  An MCP client's configuration:",
        `  ${MCP_CLIENT_CONFIG}`
      ].join("\n")
    )
  )
