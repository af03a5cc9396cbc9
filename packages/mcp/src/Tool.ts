import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js"
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations
} from "@modelcontextprotocol/sdk/types.js"
import type { PrboxClientShape } from "@prbox/client"
import { Cause, Effect, Exit, Option } from "effect"
import * as z from "zod"
import { renderToolError, type TaggedFailure, type ToolError, toToolError } from "./ToolErrors.ts"

/** What the user's config.json allows agents (`"mcp": {...}`), read afresh for each call; unreadable: nothing. */
export interface McpPolicy {
  /** Whether sandbox_open may open a repository on this machine (a path, `file:`, a remote on this host). */
  readonly allowLocalPaths: Effect.Effect<boolean>
  /** Whether sandbox_push is served (read when the server starts) and may push (read again on each call). */
  readonly allowPush: Effect.Effect<boolean>
}

/** What the SDK hands a tool besides its arguments: the cancel signal, `_meta`, notifications. */
export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** A tool's answer: the structured result (its output schema) and a short rendering for the model to read. */
export interface ToolAnswer<O> {
  readonly structured: O
  readonly text: string
}

/** The arguments or the result a zod shape describes. */
type Of<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>

/** One tool: its schemas, what an agent reads about it, and what it does through the daemon's client. */
export interface ToolDefinition<I extends z.ZodRawShape, O extends z.ZodRawShape> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: I
  readonly output: O
  readonly annotations: ToolAnnotations
  readonly run: (
    client: PrboxClientShape,
    args: Of<I>,
    extra: ToolExtra,
    policy: McpPolicy
  ) => Effect.Effect<ToolAnswer<Of<O>>, TaggedFailure>
}

/** A tool ready for a server: its name, and how it registers itself with the daemon's client. */
export interface Tool {
  readonly name: string
  readonly register: (server: McpServer, client: PrboxClientShape, policy: McpPolicy) => void
}

/** Where an error result carries its code and message for a client to switch on. */
export const ERROR_META_KEY = "dev.prbox/error"

/**
 * The result of a failed call: `isError`, and `<code>: <message>` to read. The
 * structured form is in `_meta` (`dev.prbox/error`: {code, message}), not in
 * `structuredContent`: clients check that against the tool's output schema,
 * errors included, and an error is not the tool's result.
 */
export const errorResult = (error: ToolError): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: renderToolError(error) }],
  _meta: { [ERROR_META_KEY]: { code: error.code, message: error.message } }
})

/** A failure of ours, logged on stderr (its details stay there) and answered as `internal`. */
const internal = (name: string, detail: string): CallToolResult => {
  process.stderr.write(`prbox mcp: ${name} failed: ${detail}\n`)
  return errorResult({
    code: "internal",
    message: `${name} failed inside the MCP server; retry once, and report it with the server's log if it fails again`
  })
}

/**
 * The call's outcome as a tool result. A success is given as the output
 * schema reads it (fields the daemon added since are left out, so a client
 * that checks the schema strictly still accepts it); a failure is the tool
 * error of its tag; a defect (a bug of ours) is `internal`.
 */
const toResult = <O>(
  exit: Exit.Exit<ToolAnswer<O>, TaggedFailure>,
  output: z.ZodObject<z.ZodRawShape>,
  name: string
): CallToolResult => {
  if (Exit.isSuccess(exit)) {
    const structured = output.safeParse(exit.value.structured)
    if (!structured.success)
      return internal(name, `its result does not match its output schema: ${structured.error.message}`)
    return { content: [{ type: "text", text: exit.value.text }], structuredContent: structured.data }
  }
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) return errorResult(toToolError(failure.value))
  return internal(name, Cause.pretty(exit.cause))
}

/** The tool as the SDK takes it: schemas, annotations, and a callback that runs the effect (cancelled with the request). */
export const defineTool = <I extends z.ZodRawShape, O extends z.ZodRawShape>(
  definition: ToolDefinition<I, O>
): Tool => ({
  name: definition.name,
  register: (server, client, policy) => {
    const output = z.object(definition.output)
    server.registerTool(
      definition.name,
      {
        title: definition.title,
        description: definition.description,
        inputSchema: definition.input,
        outputSchema: definition.output,
        annotations: { title: definition.title, ...definition.annotations }
      },
      // The SDK types the callback's arguments by the input shape.
      (async (args: Of<I>, extra: ToolExtra) =>
        toResult(
          await Effect.runPromiseExit(definition.run(client, args, extra, policy), { signal: extra.signal }),
          output,
          definition.name
        )) as never
    )
  }
})
