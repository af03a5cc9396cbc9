export { makeServer, serveStdio, TOOLS } from "./Server.ts"
export { ERROR_META_KEY, type McpPolicy, type Tool, type ToolAnswer, type ToolDefinition } from "./Tool.ts"
export * from "./ToolErrors.ts"
