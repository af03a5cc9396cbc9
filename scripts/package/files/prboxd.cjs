#!/usr/bin/env node
"use strict"
// prboxd: refuses an old Node, sets the daemon's V8 flags (DAEMON_NODE_FLAGS in
// packages/client/src/Launch.ts) before the heap grows, runs the daemon.
if (require("./node-check.cjs")("prboxd")) {
  require("node:v8").setFlagsFromString("--max-semi-space-size=1")
  import("../lib/prboxd.js")
}
