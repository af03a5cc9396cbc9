// Builds every test image that is missing (each is tagged by content: the
// remote engine's takes about 4 minutes cold, seconds once its Debian root
// filesystem is cached), prbox's
// own default image (the glibc base the environment tests build FROM), and
// the code-server distribution the engine's tests mount (global-setup.ts).
import * as NodeServices from "@effect/platform-node/NodeServices"
import { NodeDocker } from "@prbox/docker"
import { DefaultImage, NodeContainerRuntime } from "@prbox/engine/node"
import { Effect, Layer } from "effect"
import { codeServerImage, ensureTestDistribution } from "./code-server.ts"
import { databaseImage } from "./database.ts"
import { healthzImage } from "./healthz.ts"
import { ensureImage, imageExists } from "./images.ts"
import { remoteEngineImage } from "./remote-engine.ts"

for (const recipe of [healthzImage, codeServerImage, remoteEngineImage, databaseImage]) {
  process.stdout.write(`${await ensureImage(recipe)}\n`)
}
if (!imageExists(DefaultImage.DEFAULT_IMAGE)) {
  const runtime = NodeContainerRuntime.layer.pipe(Layer.provide(NodeDocker.layer()))
  await Effect.runPromise(
    DefaultImage.buildDefaultImage((line) => Effect.sync(() => process.stderr.write(`[prbox images] ${line}\n`))).pipe(
      Effect.provide(Layer.mergeAll(runtime, NodeServices.layer))
    )
  )
}
process.stdout.write(`${DefaultImage.DEFAULT_IMAGE}\n`)
process.stdout.write(`${(await ensureTestDistribution()).root}\n`)
