// Modules, not the packages' indexes: nothing here loads effect (a `prbox ls` then starts in a few milliseconds).
import { type ClientHome, currentHome } from "@prbox/client/Home"
import { normalizeOpenInput } from "@prbox/client/OpenInput"
import { terminalSafe } from "@prbox/domain/TerminalText"
import { PRBOX_VERSION } from "@prbox/domain/Version"
import { describe, listText, terminalColumns } from "./Format.ts"
import { printFailure } from "./PrintFailure.ts"
import type { DaemonQuery, QuickCommand } from "./QuickCommand.ts"
import { openQuickly } from "./QuickOpen.ts"
import { requestJson } from "./QuickSocket.ts"
import { sandboxList, sandboxView } from "./QuickView.ts"
import { sandboxOfHost } from "./SshConfig.ts"
import { proxy } from "./SshProxy.ts"

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
  const answer = await requestJson(context.socketPath, "GET", pathOf(command, context.cwd))
  const text = textOf(command, answer, context)
  return text === undefined ? undefined : `${text}\n`
}

/**
 * `ssh-proxy` from a running daemon: true once the connection ended or was
 * refused (its message printed as the full CLI prints it); false, having
 * sent nothing, when the host is no sandbox's or no daemon answers (the full
 * CLI then says so, or starts one).
 */
const proxyQuickly = async (host: string, home: ClientHome): Promise<boolean> => {
  const id = sandboxOfHost(host)
  if (id === undefined) return false
  const ended = await proxy(home, id)
  if (ended._tag === "Unreachable") return false
  if (ended._tag === "Refused") printFailure({ json: false }, { tag: "SshRefused", message: ended.message, code: 1 })
  return true
}

/** Prints the answer to `command` for this process's home and returns true, or prints nothing and returns false. */
export const answerQuickly = async (command: QuickCommand): Promise<boolean> => {
  if (command._tag === "version") {
    // effect/cli colours the line on a terminal: there the full CLI prints it.
    if (process.stdout.isTTY === true) return false
    process.stdout.write(`prbox v${PRBOX_VERSION}\n`)
    return true
  }
  const home = currentHome()
  if (command._tag === "ssh-proxy") return proxyQuickly(command.host, home)
  const { socketPath } = home
  if (command._tag === "open") {
    return openQuickly(command, { socketPath, cwd: process.cwd(), since: Date.now(), stderrTty: process.stderr.isTTY })
  }
  const text = await quickAnswer(command, {
    socketPath,
    cwd: process.cwd(),
    now: Date.now(),
    columns: terminalColumns(process.stdout)
  })
  if (text === undefined) return false
  process.stdout.write(terminalSafe(text))
  return true
}
