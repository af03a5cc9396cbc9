import { createHash } from "node:crypto"
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { directoryInputs, docker, type ImageRecipe } from "./images.ts"

const recipeDir = fileURLToPath(new URL("./healthz/", import.meta.url))
// Debian's busybox-static: a single static binary, so the image can be FROM scratch.
const busybox = "/usr/bin/busybox"

/**
 * A stand-in for code-server (see healthz/Dockerfile): answers /healthz,
 * /login and / on 8080 like code-server does, and starts in milliseconds.
 */
export const healthzImage: ImageRecipe = {
  name: "healthz",
  // The binary is hashed rather than inlined: it is megabytes, and tests compute the tag.
  inputs: () => [
    "busybox",
    createHash("sha256").update(readFileSync(busybox)).digest("hex"),
    ...directoryInputs(recipeDir)
  ],
  build: (tag) => {
    const context = mkdtempSync(join(tmpdir(), "prbox-healthz-"))
    try {
      copyFileSync(busybox, join(context, "busybox"))
      for (const file of readdirSync(recipeDir)) copyFileSync(join(recipeDir, file), join(context, file))
      docker(["build", "--quiet", "--tag", tag, context])
    } finally {
      rmSync(context, { recursive: true, force: true })
    }
  }
}
