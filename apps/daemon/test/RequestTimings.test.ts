import { existsSync, readFileSync, unlinkSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { REQUEST_TIMINGS_ENV, type TimingsDump } from "../src/RequestTimings.ts"
import { call, makeHome, removeHome, socketOf, startDaemon, until } from "./support.ts"

/** SIGUSR2 to the daemon, then the dump it writes (removed, so the next one is seen afresh). */
const dumpOf = async (pid: number, file: string): Promise<TimingsDump> => {
  process.kill(pid, "SIGUSR2")
  await until("the daemon to write its request timings", async () => existsSync(file))
  const dump = JSON.parse(readFileSync(file, "utf8")) as TimingsDump
  unlinkSync(file)
  return dump
}

describe("the daemon's own time per request (for the api bench)", () => {
  it(`with ${REQUEST_TIMINGS_ENV} set: per path, one sample a request, written on SIGUSR2 and then cleared`, async () => {
    const home = makeHome("request-timings")
    const file = join(home, "timings.json")
    const daemon = await startDaemon(home, { [REQUEST_TIMINGS_ENV]: file })
    try {
      await dumpOf(daemon.pid, file) // what starting it took (its readiness probes)
      for (let i = 0; i < 3; i++) {
        expect((await call(socketOf(home), { path: "/v1/sandboxes?all=true" })).status).toBe(200)
      }
      const dump = await dumpOf(daemon.pid, file)
      expect(Object.keys(dump)).toEqual(["/v1/sandboxes"])
      const samples = dump["/v1/sandboxes"]
      expect(samples?.wallMs).toHaveLength(3)
      expect(samples?.cpuMs).toHaveLength(3)
      for (const ms of [...(samples?.wallMs ?? []), ...(samples?.cpuMs ?? [])]) expect(ms).toBeGreaterThanOrEqual(0)
      expect(await dumpOf(daemon.pid, file)).toEqual({})
    } finally {
      await daemon.stop()
      removeHome(home)
    }
  })

  it(`without ${REQUEST_TIMINGS_ENV}: nothing is installed (SIGUSR2 has Node's default effect: it ends the process)`, async () => {
    const home = makeHome("request-timings-off")
    const daemon = await startDaemon(home)
    try {
      expect((await call(socketOf(home), { path: "/v1/sandboxes" })).status).toBe(200)
      process.kill(daemon.pid, "SIGUSR2")
      expect((await daemon.exit).signal).toBe("SIGUSR2")
    } finally {
      await daemon.stop()
      removeHome(home)
    }
  })
})
