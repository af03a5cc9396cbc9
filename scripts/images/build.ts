// Builds every test image that is missing (each is tagged by content), and
// the code-server distribution the engine's tests mount (global-setup.ts).
import { codeServerImage, ensureTestDistribution } from "./code-server.ts"
import { healthzImage } from "./healthz.ts"
import { ensureImage } from "./images.ts"

for (const recipe of [healthzImage, codeServerImage]) {
  process.stdout.write(`${await ensureImage(recipe)}\n`)
}
process.stdout.write(`${(await ensureTestDistribution()).root}\n`)
