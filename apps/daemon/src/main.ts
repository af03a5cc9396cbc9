import { enableCompileCache } from "node:module"

// Node keeps compiled modules between runs (NODE_COMPILE_CACHE or the OS temp directory).
enableCompileCache()
await import("./Run.ts")
