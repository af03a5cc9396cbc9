import { execFileSync, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Launch } from "@prbox/client"
import { V8_TIERING_DEFAULTS } from "@prbox/domain"
import { describe, expect, it } from "vitest"

const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url))
const TIERING = fileURLToPath(new URL("../src/Tiering.ts", import.meta.url))

describe("the daemon's V8 tiering: start-up unoptimized, requests optimized as usual", () => {
  it("the thresholds it sets back are this Node's own defaults", () => {
    const options = execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" })
    for (const [flag, value] of Object.entries(V8_TIERING_DEFAULTS)) {
      expect(options, flag).toContain(`default: --${flag}=${value}\n`)
    }
  })

  it("every launcher passes the same flags (the sources' bin/prboxd and the package's bin/prboxd.cjs)", () => {
    const script = readFileSync(repoFile("apps/daemon/bin/prboxd"), "utf8")
    expect(script).toContain(`exec node ${Launch.DAEMON_NODE_FLAGS.join(" ")} \\\n`)
    const packaged = readFileSync(repoFile("scripts/package/files/prboxd.cjs"), "utf8")
    expect(packaged).toContain(Launch.DAEMON_NODE_FLAGS.map((flag) => `    "${flag}"`).join(",\n"))
  })

  it("under the launch flags hot code stays unoptimized; code run after the thresholds are set back is optimized", () => {
    // Each called as often: ten times V8's default threshold, a tenth of the start-up one. (A function's
    // budget is set when it is first run: code run before the restore keeps the start-up one until spent.)
    const program = `
      import { restoreOptimization } from ${JSON.stringify(TIERING)}
      function startup(n) { return (n * 31) ^ (n >>> 3) }
      function serving(n) { return (n * 31) ^ (n >>> 3) }
      const calls = ${V8_TIERING_DEFAULTS["invocation-count-for-maglev"] * 10}
      let total = 0
      for (let i = 0; i < calls; i++) total += startup(i)
      console.log("restoring")
      restoreOptimization()
      for (let i = 0; i < calls; i++) total += serving(i)
      // A latch on V8's concurrent compile: without it the process can exit before "completed" is traced.
      ;%WaitForBackgroundOptimization()
      console.log("done", total !== 0)
    `
    const run = spawnSync(
      process.execPath,
      [...Launch.DAEMON_NODE_FLAGS, "--trace-opt", "--allow-natives-syntax", "--input-type=module", "-e", program],
      { encoding: "utf8" }
    )
    expect(run.status, run.stderr).toBe(0)
    const [before, after] = run.stdout.split("restoring\n")
    expect(before).not.toMatch(/JSFunction startup /)
    expect(after).toMatch(/completed (compiling|optimizing) \S+ <JSFunction serving /)
  })
})
