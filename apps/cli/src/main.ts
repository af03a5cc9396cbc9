import { enableCompileCache } from "node:module"
import { quickCommand } from "./QuickCommand.ts"

// Node keeps compiled modules between runs (NODE_COMPILE_CACHE or the OS temp
// directory): each `prbox` command starts about twice as fast.
enableCompileCache()

// A reader that stops early (`prbox logs | head`) closes our stdout: that is
// the reader's choice, not a failure, so end quietly as other Unix tools do.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0)
  throw error
})

// `ls` and `status` from a running daemon, and `--version`, need neither
// effect nor the command table: the fast path answers them with a few small modules (QuickAnswer.ts),
// and hands anything it cannot answer completely to the full CLI.
const quick = quickCommand(process.argv.slice(2))
const answered = quick !== undefined && (await (await import("./QuickAnswer.ts")).answerQuickly(quick))
if (!answered) await import("./Run.ts")
