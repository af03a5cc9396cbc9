import { terminalSafe } from "@prbox/domain/TerminalText"

/** How a failure is printed, without effect: the full CLI (Exit.ts) and the fast path print it alike. */

/** A failure with a stable tag and a message, whatever produced it. */
export interface Reported {
  readonly tag: string
  readonly message: string
  readonly code: number
  /** UpdateRefused: the workspace's changed files, for `--json`. */
  readonly changedFiles?: ReadonlyArray<string>
}

/** Where a command's result goes: human text, or JSON on stdout. */
export interface Output {
  readonly json: boolean
}

const oneLine = (text: string): string => text.replace(/\s*\n\s*/g, "; ")

/** Prints a failure as one line on stderr (or a JSON error object on stdout with --json) and sets the exit code. */
export const printFailure = (output: Output, failure: Reported): void => {
  if (output.json) {
    const files = failure.changedFiles === undefined ? {} : { changedFiles: failure.changedFiles }
    process.stdout.write(`${JSON.stringify({ error: { tag: failure.tag, message: failure.message, ...files } })}\n`)
  } else {
    process.stderr.write(`prbox: ${oneLine(terminalSafe(failure.message))}\n`)
  }
  process.exitCode = failure.code
}
