// Modules, not the packages' indexes: nothing here loads effect (a `prbox ls` then starts in a few milliseconds).
import { currentHome } from "@prbox/client/Home"
import { normalizeOpenInput } from "@prbox/client/OpenInput"
import { terminalSafe } from "@prbox/domain/TerminalText"
import { PRBOX_VERSION } from "@prbox/domain/Version"
import { API_HEADER, servesThisApi } from "@prbox/protocol/ApiVersion"
import { describe, listText, terminalColumns } from "./Format.ts"
import type { DaemonQuery, QuickCommand } from "./QuickCommand.ts"
import { sandboxList, sandboxView } from "./QuickView.ts"

/**
 * node:net through getBuiltinModule rather than `import`: an ES import of a
 * built-in evaluates all its exports (node:http's load undici). And HTTP/1.0
 * by hand rather than node:http, whose modules and parser cost more to load
 * than the whole answer takes: the answer is one status line, headers and a
 * body that ends when the daemon closes the connection (its length checked).
 */
const { connect } = process.getBuiltinModule("node:net")

/** Longer than a loaded daemon takes to list 200 rows; a slower one is left to the full CLI and its own deadline. */
const QUIET_MS = 5_000

/**
 * The body of a `200` answer of type JSON from a daemon that serves this
 * client's API (its API_HEADER), whole (as long as its content-length says),
 * or undefined.
 */
export const bodyOf = (answer: Buffer): string | undefined => {
  const end = answer.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const [status = "", ...headers] = answer.toString("latin1", 0, end).split("\r\n")
  if (!/^HTTP\/1\.[01] 200 /.test(status)) return undefined
  const header = (name: string) =>
    headers
      .find((line) => line.toLowerCase().startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim()
  const body = answer.subarray(end + 4)
  if (!(header("content-type") ?? "").startsWith("application/json")) return undefined
  if (!servesThisApi(header(API_HEADER))) return undefined
  if (header("transfer-encoding") !== undefined || header("content-length") !== String(body.length)) return undefined
  return body.toString("utf8")
}

/**
 * GET `path` on the daemon's socket: the parsed JSON of a whole 200 answer
 * in this client's API, or undefined for anything else (no socket, refused,
 * another status or API, not JSON, a cut answer, silence for QUIET_MS).
 */
const getJson = (socketPath: string, path: string): Promise<unknown> =>
  new Promise((resolve) => {
    const socket = connect({ path: socketPath })
    const chunks: Array<Buffer> = []
    socket.setTimeout(QUIET_MS, () => socket.destroy())
    socket.on("connect", () => socket.write(`GET ${path} HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n`))
    socket.on("data", (chunk: Buffer) => chunks.push(chunk))
    socket.on("end", () => {
      const body = bodyOf(Buffer.concat(chunks))
      try {
        resolve(body === undefined ? undefined : JSON.parse(body))
      } catch {
        resolve(undefined)
      }
    })
    // Refused, reset, timed out: the first resolve wins, so after `end` this changes nothing.
    socket.on("close", () => resolve(undefined))
    socket.on("error", () => resolve(undefined))
  })

/** The request the full CLI makes for `command` (the list is asked whole for the table: legacy rows always show). */
const pathOf = (command: DaemonQuery, cwd: string): string => {
  if (command._tag === "status") {
    return `/v1/resolve?${new URLSearchParams({ q: normalizeOpenInput(command.id, cwd) })}`
  }
  return command.json && !command.all ? "/v1/sandboxes" : "/v1/sandboxes?all=true"
}

/** The text for `command` from the daemon's answer, or undefined when the answer is not what the API declares. */
const textOf = (command: DaemonQuery, answer: unknown, context: QuickContext): string | undefined => {
  if (command._tag === "status") {
    const view = sandboxView(answer)
    if (view === undefined) return undefined
    return command.json ? JSON.stringify(view) : describe(view, context.now)
  }
  const views = sandboxList(answer)
  if (views === undefined) return undefined
  return command.json ? JSON.stringify(views) : listText(views, command.all, context.now, context.columns)
}

/** Where the fast path asks, and the moment, directory and terminal the full CLI would read the answer in. */
export interface QuickContext {
  readonly socketPath: string
  readonly cwd: string
  readonly now: number
  /** The terminal's width the table fits, or undefined (not a terminal). */
  readonly columns: number | undefined
}

/**
 * What the full CLI would print on stdout for `command` with exit code 0, from
 * a running daemon that serves this client's API; or undefined, and the full
 * CLI runs the same argv (it starts the daemon, reports the failure, ...).
 */
export const quickAnswer = async (command: DaemonQuery, context: QuickContext): Promise<string | undefined> => {
  // One request: the answer's own header says whether the daemon serves this API (the full CLI asks GET /version).
  const answer = await getJson(context.socketPath, pathOf(command, context.cwd))
  const text = textOf(command, answer, context)
  return text === undefined ? undefined : `${text}\n`
}

/** Prints the answer to `command` for this process's home and returns true, or prints nothing and returns false. */
export const answerQuickly = async (command: QuickCommand): Promise<boolean> => {
  if (command._tag === "version") {
    // effect/cli colours the line on a terminal: there the full CLI prints it.
    if (process.stdout.isTTY === true) return false
    process.stdout.write(`prbox v${PRBOX_VERSION}\n`)
    return true
  }
  const text = await quickAnswer(command, {
    socketPath: currentHome().socketPath,
    cwd: process.cwd(),
    now: Date.now(),
    columns: terminalColumns(process.stdout)
  })
  if (text === undefined) return false
  process.stdout.write(terminalSafe(text))
  return true
}
