import { describeEvent } from "@prbox/domain/EventText"
import { terminalSafe } from "@prbox/domain/TerminalText"
import type { SandboxEvent, SandboxView } from "@prbox/protocol"
import { ExitCode } from "@prbox/protocol/ExitCodes"
import { setupLine } from "./Format.ts"

/**
 * What `prbox open` (and restart, rebuild) print, without effect: the full
 * CLI and the fast path (QuickOpen.ts) write the same text from these.
 */

/** Elapsed time as the progress displays show it. */
export const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`

/** A followed sandbox's event as the plain (non-terminal) display writes it on stderr. */
export const progressLine = (event: SandboxEvent, since: number): string =>
  `[${seconds(event.at - since).padStart(6)}] ${event.status}: ${terminalSafe(describeEvent(event))}\n`

/** What a sandbox that runs prints on stdout (without --json). */
export const readyLines = (view: SandboxView) => {
  const setup = setupLine(view)
  return [
    `sandbox ${view.id} is running: ${view.url ?? "(no URL)"}`,
    `password: run \`prbox password ${view.id}\``,
    ...(setup === null
      ? []
      : [`warning: ${setup}; the sandbox runs so you can fix it (\`prbox exec ${view.id} -- ...\`)`])
  ].join("\n")
}

/** What `--no-wait` prints once the open is accepted (without --json). */
export const acceptedLine = (view: SandboxView) =>
  `sandbox ${view.id} is ${view.status}; follow it with \`prbox logs -f ${view.id}\``

/** Why a followed sandbox did not come to run: its failure, or a stop meanwhile. */
export const unsettledFailure = (view: SandboxView, current: SandboxView) =>
  current.status === "error"
    ? {
        tag: "SandboxFailed",
        message: `sandbox ${view.id} failed: ${current.error ?? "unknown error"} (see \`prbox logs ${view.id}\`)`,
        code: ExitCode.other
      }
    : {
        tag: "Conflict",
        message: `sandbox ${view.id} is ${current.status}: it was stopped while starting`,
        code: ExitCode.conflict
      }
