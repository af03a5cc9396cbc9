// Modules, not the packages' indexes: nothing here loads effect.
import { openRequest } from "@prbox/client/OpenInput"
import { isSettling } from "@prbox/domain/EventText"
import { terminalSafe } from "@prbox/domain/TerminalText"
import { ExitCode } from "@prbox/protocol/ExitCodes"
import { acceptedLine, progressLine, readyLines, unsettledFailure } from "./OpenText.ts"
import { printFailure } from "./PrintFailure.ts"
import type { OpenCommand } from "./QuickCommand.ts"
import { followLines, requestJson } from "./QuickSocket.ts"
import { sandboxEvent, sandboxView } from "./QuickView.ts"

/** As the client library's follow (Follow.ts): a stream that ends early is opened again this often. */
const REOPENS = 5
const REOPEN_PAUSE_MS = 200

/** Where the fast path asks, from where, since when it shows events, and whether stderr is a terminal. */
export interface OpenContext {
  readonly socketPath: string
  readonly cwd: string
  /** The command's start: events before it are not shown, the elapsed times count from it. */
  readonly since: number
  readonly stderrTty: boolean
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Follows sandbox `id`'s events (shown from `since` on, one plain line
 * each on stderr) until one settles it, opening a stream that ends early
 * again after the last event seen, as the full CLI's follow does. The
 * failure the full CLI reports when the daemon goes away or keeps closing
 * the stream; else undefined.
 */
const follow = async (context: OpenContext, id: string) => {
  let after = 0
  for (let attempt = 0; ; attempt++) {
    const query = after === 0 ? "" : `?after=${after}`
    const ended = await followLines(context.socketPath, `/v1/sandboxes/${id}/events${query}`, (value) => {
      const event = sandboxEvent(value)
      if (event === undefined) return false
      after = event.seq
      if (event.at < context.since) return false
      process.stderr.write(progressLine(event, context.since))
      return isSettling(event)
    })
    if (ended === "done") return undefined
    if ((await requestJson(context.socketPath, "GET", "/version")) === undefined) return stopped(id)
    if (attempt === REOPENS) {
      return {
        tag: "ProtocolError",
        message: `the daemon keeps closing the event stream of sandbox ${id}`,
        code: ExitCode.other
      }
    }
    await pause(REOPEN_PAUSE_MS)
  }
}

/** The daemon went away while the command followed sandbox `id` (the client library's DaemonStopped). */
const stopped = (id: string) => ({
  tag: "DaemonStopped",
  message: `the daemon stopped while following sandbox ${id}; run \`prbox daemon logs\`, then \`prbox status ${id}\``,
  code: ExitCode.daemonUnreachable
})

/**
 * `prbox open` from a running daemon that serves this client's API, printing
 * what the full CLI prints (SandboxCommands.ts's open): the open posted, its
 * progress followed as plain lines on stderr, the running sandbox's lines
 * (or its view with --json) on stdout, a failure as the full CLI reports
 * it. False, having printed nothing, whenever the full CLI must run it
 * instead: a terminal's progress display, no daemon or another API, an
 * open the daemon refused (the full CLI asks again and reports it: an open
 * of a PR answers its live sandbox, never a second one).
 */
export const openQuickly = async (command: OpenCommand, context: OpenContext): Promise<boolean> => {
  if (!command.json && context.stderrTty) return false
  const request = openRequest(command.input, context.cwd, { pr: command.pr })
  const opened = sandboxView(await requestJson(context.socketPath, "POST", "/v1/sandboxes", JSON.stringify(request)))
  if (opened === undefined) return false
  const output = { json: command.json }
  const print = (view: typeof opened, text: string) =>
    process.stdout.write(command.json ? `${JSON.stringify(view)}\n` : `${terminalSafe(text)}\n`)
  if (!command.wait) {
    print(opened, acceptedLine(opened))
    return true
  }
  if (opened.status !== "running") {
    const failed = await follow(context, opened.id)
    if (failed !== undefined) {
      printFailure(output, failed)
      return true
    }
  }
  const current =
    opened.status === "running"
      ? opened
      : sandboxView(await requestJson(context.socketPath, "GET", `/v1/sandboxes/${opened.id}`))
  if (current?.status === "running") print(current, readyLines(current))
  else printFailure(output, current === undefined ? stopped(opened.id) : unsettledFailure(opened, current))
  return true
}
