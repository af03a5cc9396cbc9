import { enableCompileCache } from "node:module"

// Node keeps compiled modules between runs (NODE_COMPILE_CACHE or the OS temp
// directory): each `prbox` command starts about twice as fast.
enableCompileCache()

// A reader that stops early (`prbox logs | head`) closes our stdout: that is
// the reader's choice, not a failure, so end quietly as other Unix tools do.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})

await import("./Run.ts")
