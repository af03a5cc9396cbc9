import { request } from "node:http"
// Modules, not the packages' indexes: nothing here loads effect (a `prbox ls` then starts in a few milliseconds).
import { currentHome } from "@prbox/client/Home"
import { normalizeOpenInput } from "@prbox/client/OpenInput"
import { API_VERSION } from "@prbox/protocol/ApiVersion"
import { describe, listText } from "./Format.ts"
import type { QuickCommand } from "./QuickCommand.ts"
import { sandboxList, sandboxView, versionInfo } from "./QuickView.ts"

/** Longer than a loaded daemon takes to list 200 rows; a slower one is left to the full CLI and its own deadline. */
const QUIET_MS = 5_000

/**
 * GET `path` on the daemon's socket: the parsed JSON of a 200 answer, or
 * undefined for anything else (no socket, refused, another status, not JSON,
 * a dropped connection, silence for QUIET_MS).
 */
const getJson = (socketPath: string, path: string): Promise<unknown> =>
  new Promise((resolve) => {
    const req = request({ socketPath, path, agent: false, timeout: QUIET_MS }, (res) => {
      const type = res.headers["content-type"] ?? ""
      if (res.statusCode !== 200 || !type.startsWith("application/json")) {
        res.resume()
        return resolve(undefined)
      }
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")))
        } catch {
          resolve(undefined)
        }
      })
      // Closed before its end: the first resolve wins, so after `end` this changes nothing.
      res.on("close", () => resolve(undefined))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(undefined))
    req.end()
  })

/** The request the full CLI makes for `command` (the list is asked whole for the table: legacy rows always show). */
const pathOf = (command: QuickCommand, cwd: string): string => {
  if (command._tag === "status") {
    return `/v1/resolve?${new URLSearchParams({ q: normalizeOpenInput(command.id, cwd) })}`
  }
  return command.json && !command.all ? "/v1/sandboxes" : "/v1/sandboxes?all=true"
}

/** The text for `command` from the daemon's answer, or undefined when the answer is not what the API declares. */
const textOf = (command: QuickCommand, answer: unknown, now: number): string | undefined => {
  if (command._tag === "status") {
    const view = sandboxView(answer)
    if (view === undefined) return undefined
    return command.json ? JSON.stringify(view) : describe(view, now)
  }
  const views = sandboxList(answer)
  if (views === undefined) return undefined
  return command.json ? JSON.stringify(views) : listText(views, command.all, now)
}

/** Where the fast path asks, and the moment and directory the full CLI would read the answer in. */
export interface QuickContext {
  readonly socketPath: string
  readonly cwd: string
  readonly now: number
}

/**
 * What the full CLI would print on stdout for `command` with exit code 0, from
 * a running daemon that serves this client's API; or undefined, and the full
 * CLI runs the same argv (it starts the daemon, reports the failure, ...).
 */
export const quickAnswer = async (command: QuickCommand, context: QuickContext): Promise<string | undefined> => {
  const [version, answer] = await Promise.all([
    getJson(context.socketPath, "/version"),
    getJson(context.socketPath, pathOf(command, context.cwd))
  ])
  if (versionInfo(version)?.api.includes(API_VERSION) !== true) return undefined
  const text = textOf(command, answer, context.now)
  return text === undefined ? undefined : `${text}\n`
}

/** Prints the answer to `command` for this process's home and returns true, or prints nothing and returns false. */
export const answerQuickly = async (command: QuickCommand): Promise<boolean> => {
  const text = await quickAnswer(command, { socketPath: currentHome().socketPath, cwd: process.cwd(), now: Date.now() })
  if (text === undefined) return false
  process.stdout.write(text)
  return true
}
