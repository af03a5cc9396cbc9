/**
 * The api bench's load generator, a process of its own: `node loadgen.ts
 * '<LoadSpec as JSON>'` runs the load and prints its figures as one JSON
 * object on stdout. It imports only load.ts (node:http, node:net), so it starts fast
 * and small and shares nothing with the bench or the daemon.
 */
import { type LoadSpec, runSpec } from "./load.ts"

const spec = JSON.parse(process.argv[2] ?? "null") as LoadSpec | null
if (spec === null || (spec.mode !== "closed" && spec.mode !== "open")) {
  process.stderr.write("usage: loadgen.ts '<LoadSpec as JSON>'\n")
  process.exit(2)
}
process.stdout.write(`${JSON.stringify(await runSpec(spec))}\n`)
