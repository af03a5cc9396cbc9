import { cpus, totalmem } from "node:os"
import { statePaths } from "@prbox/domain"
import { Effect, FileSystem, Layer } from "effect"
import { ChildProcessSpawner } from "effect/process"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { SetupFailed } from "../Errors.ts"
import { SandboxTools } from "../SandboxTools.ts"
import { ensureCodeServerDistribution } from "./tools/CodeServerDistribution.ts"
import { buildDefaultImage, DEFAULT_IMAGE } from "./tools/DefaultImage.ts"

export interface Options {
  /** `$PRBOX_HOME`: its `code-server` folder keeps the distributions. */
  readonly home: string
  /** Another folder of distributions (tests share one built at set-up). */
  readonly codeServerDir?: string
}

/**
 * The code-server distribution and the default image, built on this host
 * from the package registries (see CodeServerDistribution.ts, DefaultImage.ts).
 */
export const layer = (options: Options) =>
  Layer.effect(
    SandboxTools,
    Effect.gen(function* () {
      const runtime = yield* ContainerRuntime
      const context = Layer.mergeAll(
        Layer.succeed(FileSystem.FileSystem, yield* FileSystem.FileSystem),
        Layer.succeed(ChildProcessSpawner.ChildProcessSpawner, yield* ChildProcessSpawner.ChildProcessSpawner),
        Layer.succeed(ContainerRuntime, runtime)
      )
      const dir = options.codeServerDir ?? statePaths(options.home).codeServer
      return SandboxTools.of({
        defaultImage: DEFAULT_IMAGE,
        ensureDefaultImage: (onProgress) =>
          Effect.gen(function* () {
            if ((yield* runtime.imageInfo(DEFAULT_IMAGE)) !== undefined) return
            yield* onProgress(`${DEFAULT_IMAGE} is not here: building it (once)`)
            yield* buildDefaultImage(onProgress).pipe(
              Effect.mapError((error) =>
                error._tag === "DefaultImageUnavailable" ? new SetupFailed({ reason: error.message }) : error
              ),
              Effect.provide(context)
            )
          }),
        codeServer: (onProgress) =>
          ensureCodeServerDistribution({ dir, onProgress }).pipe(
            Effect.mapError((error) => new SetupFailed({ reason: error.message })),
            Effect.provide(context)
          ),
        resources: Effect.sync(() => ({ cpus: cpus().length, memoryMb: Math.floor(totalmem() / (1024 * 1024)) }))
      })
    })
  )
