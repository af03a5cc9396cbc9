import { enableCompileCache } from "node:module"

// Node keeps compiled modules between runs (NODE_COMPILE_CACHE or the OS temp directory).
enableCompileCache()
// The launcher set the cache directory only for this process (see @prbox/client Launch.ts): git and other children do not inherit it.
if (process.env.PRBOXD_LAUNCHER_COMPILE_CACHE !== undefined) {
  delete process.env.NODE_COMPILE_CACHE
  delete process.env.PRBOXD_LAUNCHER_COMPILE_CACHE
}
await import("./Run.ts")
