// `pnpm bench devcontainer --spans`: where one prbox open spent its time,
// from the engine's timed service calls (engine.ts's recorder) and the
// sandbox's own log, both relative to the open's start.
import type { SandboxEvent } from "@prbox/domain"
import type { Recorder } from "./engine.ts"

/** Calls shorter than this are left out: the timeline is for what costs. */
const SHOWN_MS = 15

const pad = (value: number) => `${Math.round(value)}`.padStart(6)

/**
 * The open's timeline: each call of `recorder` from index `from` (started at
 * `start`, performance.now() time) at least SHOWN_MS long, and each log line
 * (`startEpoch`: Date.now() at the same instant), ordered by when they began.
 */
export const openTimeline = (
  recorder: Recorder,
  from: number,
  start: number,
  startEpoch: number,
  log: ReadonlyArray<SandboxEvent>
): string => {
  const rows: Array<{ readonly at: number; readonly text: string }> = []
  for (const span of recorder.slice(from)) {
    const took = span.end - span.start
    if (took < SHOWN_MS) continue
    rows.push({ at: span.start - start, text: `${pad(span.start - start)} ${pad(took)} ms  ${span.op}` })
  }
  for (const event of log) {
    const line = event._tag === "Progress" ? event.line : `status: ${event.status}`
    rows.push({ at: event.at - startEpoch, text: `${pad(event.at - startEpoch)}           log: ${line.slice(0, 100)}` })
  }
  return [`  start(ms)  took`, ...rows.sort((a, b) => a.at - b.at).map((row) => `  ${row.text}`)].join("\n")
}
