import { followUntilSettled, type PrboxClientShape } from "@prbox/client"
import { describeEvent, type SandboxEvent, terminalSafe } from "@prbox/domain"
import type { SandboxView } from "@prbox/protocol"
import { Effect } from "effect"
import { CliFailure } from "./Exit.ts"
import { progressLine, seconds, unsettledFailure } from "./OpenText.ts"

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

/** The setup step (`[2/5]`) a progress line belongs to, if any: shown beside the spinner, never acted on. */
const stepOf = (event: SandboxEvent): string | undefined =>
  event._tag === "Progress" ? /^(\[\d+\/\d+\])/.exec(event.line)?.[1] : undefined

interface Renderer {
  readonly event: (event: SandboxEvent) => void
  readonly close: () => void
}

/** Non-TTY: one plain line per event, on stderr. */
const plainRenderer = (since: number): Renderer => ({
  event: (event) => process.stderr.write(progressLine(event, since)),
  close: () => {}
})

/** TTY: one spinner line, redrawn: phase, elapsed time, setup step, the last log line. */
const ttyRenderer = (since: number, initial: string): Renderer => {
  let frame = 0
  let status = initial
  let step: string | undefined
  let last = ""
  const draw = () => {
    const width = process.stderr.columns || 80
    const text = `${FRAMES[frame % FRAMES.length]} ${status} ${seconds(Date.now() - since)}${step === undefined ? "" : ` ${step}`}  ${last}`
    process.stderr.write(`\r\u001b[2K${text.slice(0, Math.max(10, width - 1))}`)
    frame++
  }
  const timer = setInterval(draw, 100)
  draw()
  return {
    event: (event) => {
      status = event.status
      step = stepOf(event) ?? step
      // One line: what the sandbox wrote, without its controls or line breaks.
      last = terminalSafe(describeEvent(event)).replace(/\s+/g, " ")
      draw()
    },
    close: () => {
      clearInterval(timer)
      process.stderr.write("\r\u001b[2K")
    }
  }
}

/**
 * Shows a sandbox's progress from `since` (when the command began) until it
 * is running (its view is returned) or ends otherwise (a failure). The
 * following itself is the client library's `followUntilSettled`.
 */
export const followUntilReady = (
  client: PrboxClientShape,
  view: SandboxView,
  since: number,
  options: { readonly tty: boolean; readonly afterStarting?: boolean }
) =>
  Effect.gen(function* () {
    if (view.status === "running") return view
    const current = yield* Effect.acquireUseRelease(
      Effect.sync(() => (options.tty ? ttyRenderer(since, view.status) : plainRenderer(since))),
      (renderer) =>
        followUntilSettled(client, view, {
          since,
          onEvent: renderer.event,
          afterStarting: options.afterStarting === true
        }),
      (renderer) => Effect.sync(() => renderer.close())
    )
    if (current.status === "running") return current
    return yield* new CliFailure(unsettledFailure(view, current))
  })
