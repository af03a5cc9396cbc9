// Builds every test image that is missing (each is tagged by content).
import { codeServerImage } from "./code-server.ts"
import { healthzImage } from "./healthz.ts"
import { ensureImage } from "./images.ts"

for (const recipe of [healthzImage, codeServerImage]) {
  process.stdout.write(`${ensureImage(recipe)}\n`)
}
