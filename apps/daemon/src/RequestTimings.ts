import { renameSync, writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * The environment variable that turns request timing on: the file the
 * timings are written to. Set only by `pnpm bench api`; unset (every normal
 * run) the daemon installs nothing: no listener, no wrapper, no memory.
 */
export const REQUEST_TIMINGS_ENV = "PRBOXD_REQUEST_TIMINGS"

/**
 * What the file holds: per path (no query), the daemon's own milliseconds per
 * request, in arrival order: wall time, and the process's CPU time over the
 * same span (on a busy machine the wall time also holds the time the daemon
 * waited for a core; the CPU time does not).
 */
export type TimingsDump = Readonly<
  Record<string, { readonly wallMs: ReadonlyArray<number>; readonly cpuMs: ReadonlyArray<number> }>
>

export interface RequestTimings {
  /** Times `req` from its arrival (headers read) to the handler's `res.end()` (the answer handed to Node). */
  readonly observe: (req: IncomingMessage, res: ServerResponse) => void
  readonly close: () => void
}

/**
 * The daemon's own time per request, measured inside it, so a bench can tell
 * it from the time its clients and the socket add. On SIGUSR2 the samples so
 * far are written to `file` (atomically: a temporary file renamed) and
 * cleared; the bench sends one before a run (to start clean) and one after.
 */
export const requestTimings = (file: string): RequestTimings => {
  let samples = new Map<string, { wallMs: Array<number>; cpuMs: Array<number> }>()
  const dump = () => {
    const out: TimingsDump = Object.fromEntries(samples)
    samples = new Map()
    const temporary = `${file}.${process.pid}.tmp`
    writeFileSync(temporary, JSON.stringify(out), { mode: 0o600 })
    renameSync(temporary, file)
  }
  process.on("SIGUSR2", dump)
  return {
    observe: (req, res) => {
      const started = performance.now()
      const cpuBefore = process.cpuUsage()
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      const end = res.end
      res.end = function (this: ServerResponse, ...args: Array<unknown>) {
        const wall = performance.now() - started
        const cpu = process.cpuUsage(cpuBefore)
        const values = samples.get(path) ?? { wallMs: [], cpuMs: [] }
        samples.set(path, values)
        values.wallMs.push(wall)
        values.cpuMs.push((cpu.user + cpu.system) / 1000)
        return (end as (...a: Array<unknown>) => ServerResponse).apply(this, args)
      } as ServerResponse["end"]
    },
    close: () => {
      process.off("SIGUSR2", dump)
    }
  }
}
