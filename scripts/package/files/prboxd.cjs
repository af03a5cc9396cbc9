#!/usr/bin/env node
"use strict"
// prboxd: refuses an old Node, starts with the daemon's Node/V8 flags (DAEMON_NODE_FLAGS in
// packages/client/src/Launch.ts), runs the daemon.
if (require("./node-check.cjs")("prboxd")) {
  const FLAGS = [
    "--max-semi-space-size=1",
    "--heap-growing-percent=30",
    "--invocation-count-for-maglev=40000",
    "--invocation-count-for-maglev-osr=10000",
    "--invocation-count-for-turbofan=300000",
    "--invocation-count-for-osr=50000"
  ]
  const missing = FLAGS.filter((flag) => !process.execArgv.includes(flag))
  if (missing.length > 0 && typeof process.execve === "function" && process.platform !== "win32") {
    // V8 sizes the young generation at start, too early for v8.setFlagsFromString: this process (same pid)
    // becomes Node started with the flags, which then finds them all in execArgv and runs on.
    process.execve(
      process.execPath,
      [process.execPath, ...process.execArgv, ...missing, __filename, ...process.argv.slice(2)],
      process.env
    )
  }
  // No execve here (Windows): the flags V8 still takes once running.
  const v8 = require("node:v8")
  for (const flag of missing) v8.setFlagsFromString(flag)
  import("../lib/prboxd.js")
}
