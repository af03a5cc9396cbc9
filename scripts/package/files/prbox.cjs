#!/usr/bin/env node
"use strict"
// prbox: refuses an old Node, turns Node's compile cache on before the first
// bundled module loads (each command starts about twice as fast), runs the CLI.
if (require("./node-check.cjs")("prbox")) {
  require("node:module").enableCompileCache()
  import("../lib/prbox.js")
}
