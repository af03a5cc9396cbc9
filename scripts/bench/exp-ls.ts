import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { installPackage } from "../package/install.ts"
import { seedRows } from "./api.ts"
import { spawnDaemon, waitForHealth } from "./daemon.ts"
import { BENCH_LABEL } from "./engine.ts"

const root = "/tmp/exp"
const home = join(root, "home")
mkdirSync(home, { recursive: true, mode: 0o700 })
writeFileSync(join(home, "config.json"), JSON.stringify({ labels: { [BENCH_LABEL]: "1" } }))
await seedRows(home)
const installed = await installPackage(join(root, "prefix"))
console.log(installed.prbox)
const daemon = spawnDaemon(home)
await waitForHealth(join(home, "run", "prboxd.sock"), daemon)
console.log("ready", daemon.pid)
await new Promise(() => {})
