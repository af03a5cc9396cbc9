import { enableCompileCache } from "node:module"

// Node keeps compiled modules between runs (NODE_COMPILE_CACHE or the OS temp
// directory): each `prbox` command starts about twice as fast.
enableCompileCache()
await import("./Run.ts")
