#!/usr/bin/env node
"use strict"
// prboxd: refuses an old Node, sets the daemon's V8 flags (DAEMON_NODE_FLAGS in
// packages/client/src/Launch.ts) before the heap grows, runs the daemon.
if (require("./node-check.cjs")("prboxd")) {
  const v8 = require("node:v8")
  for (const flag of [
    "--max-semi-space-size=1",
    "--heap-growing-percent=30",
    "--invocation-count-for-maglev=40000",
    "--invocation-count-for-maglev-osr=10000",
    "--invocation-count-for-turbofan=300000",
    "--invocation-count-for-osr=50000"
  ]) {
    v8.setFlagsFromString(flag)
  }
  import("../lib/prboxd.js")
}
