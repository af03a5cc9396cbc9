import { pipeline, Transform } from "node:stream"
import { Effect } from "effect"
import type { DockerShape, Unreachable } from "./Docker.ts"
import type { ImageNotFound } from "./DockerError.ts"

type Engine = Pick<DockerShape, "saveImage" | "loadImage">

/**
 * Copies an image from one engine to another: `from`'s save streamed into
 * `to`'s load as it is read, never a whole archive on disk or in memory.
 * `onBytes` gets the archive's bytes sent so far, as they go; `onProgress`
 * the loading engine's lines.
 */
export const copyImage = (options: {
  readonly ref: string
  readonly from: Engine
  readonly to: Engine
  readonly onBytes?: (sent: number) => void
  readonly onProgress?: (line: string) => void
}): Effect.Effect<void, ImageNotFound | Unreachable> =>
  Effect.gen(function* () {
    const archive = yield* options.from.saveImage(options.ref)
    let sent = 0
    // Counted as the load takes them (a "data" listener would set the stream flowing before the load reads).
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        sent += chunk.length
        options.onBytes?.(sent)
        done(null, chunk)
      }
    })
    // A save that fails midway (its engine gone) fails the counted stream, hence the load it feeds.
    pipeline(archive, counted, () => {})
    yield* options.to.loadImage(counted, options.onProgress ?? (() => {}))
  }).pipe(Effect.scoped)
