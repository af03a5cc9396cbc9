import { startCli } from "./Start.ts"

await startCli(() => import("./Run.ts"))
