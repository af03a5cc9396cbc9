import { enableCompileCache } from "node:module"
import { quickCommand } from "./QuickCommand.ts"

/**
 * How `prbox` starts, from sources (main.ts) and installed (the package's bin
 * loads this module as its own small CommonJS bundle): `ls` and `status` from
 * a running daemon, and `--version`, by the fast path (QuickAnswer.ts: a few
 * small modules, no effect); anything else, and whatever the fast path cannot
 * answer completely, by the full CLI that `loadFull` imports.
 */
export const startCli = async (loadFull: () => Promise<unknown>): Promise<void> => {
  // A reader that stops early (`prbox logs | head`) closes our stdout: that is
  // the reader's choice, not a failure, so end quietly as other Unix tools do.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
    throw error
  })
  const quick = quickCommand(process.argv.slice(2))
  if (quick !== undefined && (await (await import("./QuickAnswer.ts")).answerQuickly(quick))) return
  // Node keeps compiled modules between runs (NODE_COMPILE_CACHE or the OS temp
  // directory): the full CLI starts about twice as fast. Only now: opening the
  // cache costs the fast path more than compiling its few modules.
  enableCompileCache()
  await loadFull()
}
