import type { ImageRecipe } from "./images.ts"

// TODO(code-server helper): Debian root filesystem + Node 24 + the code-server npm package.
export const codeServerImage: ImageRecipe = {
  name: "code-server",
  inputs: () => [],
  build: () => {
    throw new Error("not yet")
  }
}
