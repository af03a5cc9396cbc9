import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { currentHome } from "@prbox/client"
import { Config } from "@prbox/engine"
import * as NodeConfig from "@prbox/engine/node/NodeConfig"
import { type McpPolicy, serveStdio } from "@prbox/mcp"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { needsDaemon } from "./Params.ts"

/** What an MCP client's configuration says to run this server (the README shows the same). */
export const MCP_CLIENT_CONFIG = `{
    "mcpServers": {
      "prbox": { "command": "prbox", "args": ["mcp"] }
    }
  }`

/**
 * What config.json allows agents, read afresh for each call (a change
 * applies without restarting the server); a config that cannot be read
 * allows nothing more.
 */
const allowed = (key: "allowLocalPaths" | "allowPush") =>
  Effect.flatMap(Config, (config) => config.load).pipe(
    Effect.map((config) => config.mcp[key]),
    Effect.provide(NodeConfig.layer({ home: currentHome().home })),
    Effect.provide(NodeFileSystem.layer),
    Effect.orElseSucceed(() => false)
  )

const policy: McpPolicy = { allowLocalPaths: allowed("allowLocalPaths"), allowPush: allowed("allowPush") }

/** `prbox mcp`: the MCP server on stdio, a client of prboxd (started when it is not running). */
export const mcpCommand = (version: string) =>
  Command.make(
    "mcp",
    {},
    // Failures (prboxd cannot be started) are one line on stderr: stdout is the protocol's.
    () => needsDaemon((client) => serveStdio(client, version, policy))({ json: false })
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
