import type { ImageRecipe } from "./images.ts"

// TODO(docker helper): FROM scratch + busybox-static, serving /healthz and /login on 8080 like code-server.
export const healthzImage: ImageRecipe = {
  name: "healthz",
  inputs: () => [],
  build: () => {
    throw new Error("not yet")
  }
}
