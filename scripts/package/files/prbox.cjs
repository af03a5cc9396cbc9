#!/usr/bin/env node
"use strict"
// prbox: refuses an old Node, then starts as apps/cli/src/main.ts does: the
// fast path (lib/prbox-start.cjs) or the full CLI (lib/prbox.js).
if (require("./node-check.cjs")("prbox")) {
  require("../lib/prbox-start.cjs").startCli(() => import("../lib/prbox.js"))
}
