import { createReadStream } from "node:fs"
import { Readable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect } from "effect"
import type { DockerShape } from "./Docker.ts"
import { DockerEngineError, ImageNotFound, ImagePullFailed } from "./DockerError.ts"
import { ImageAnswer, toImageInfo } from "./EngineAnswers.ts"
import { call, decode } from "./EngineCall.ts"
import { followProgress } from "./ProgressStream.ts"
import { followPull, StatusEntry, statusLine } from "./PullProgress.ts"

type Images = Pick<DockerShape, "imageExists" | "imageInfo" | "pullImage" | "importImage">

/** A stream we send to the engine failing (a file unreadable or gone) fails the request it feeds. */
export const sourceFailure = (source: Readable, operation: string): Effect.Effect<never, DockerEngineError> =>
  Effect.callback<never, DockerEngineError>((resume) => {
    source.once("error", (cause) => resume(Effect.fail(new DockerEngineError({ operation, detail: cause.message }))))
  })

/**
 * The image operations of the Docker service. `patient` has no request
 * timeout: an import's layer commit and a build's steps can be silent for
 * long, and their callers bound them.
 */
export const images = (api: Dockerode, patient: Dockerode): Images => {
  const inspect = (ref: string) => call("image.inspect", () => api.getImage(ref).inspect(), { 404: ImageNotFound })

  return {
    imageExists: Effect.fn("Docker.imageExists")(function* (ref) {
      return yield* inspect(ref).pipe(
        Effect.as(true),
        Effect.catchTag("ImageNotFound", () => Effect.succeed(false))
      )
    }),

    imageInfo: Effect.fn("Docker.imageInfo")(function* (ref) {
      return yield* inspect(ref).pipe(
        Effect.flatMap(decode("image.inspect", ImageAnswer)),
        Effect.map(toImageInfo),
        Effect.catchTag("ImageNotFound", () => Effect.succeed(undefined))
      )
    }),

    pullImage: Effect.fn("Docker.pullImage")(function* (ref, onProgress) {
      const response = yield* call("image.pull", () => api.pull(ref), {}).pipe(
        // Every refusal of a pull (unknown repository, no registry, denied) is the pull failing.
        Effect.catchTag("DockerEngineError", (error) =>
          Effect.fail(new ImagePullFailed({ operation: error.operation, detail: error.detail }))
        )
      )
      if (!(response instanceof Readable)) {
        return yield* new ImagePullFailed({ operation: "image.pull", detail: "the engine sent no progress stream" })
      }
      yield* followPull(ref, response, onProgress)
    }),

    importImage: Effect.fn("Docker.importImage")(function* ({ archivePath, tag, changes }, onProgress) {
      const operation = "image.import"
      const source = createReadStream(archivePath)
      const imported = Effect.gen(function* () {
        const response = yield* call(
          operation,
          // `repo` takes `name:tag` whole; each change is its own `changes` parameter.
          (signal) => patient.importImage(source, { repo: tag, changes: [...changes], abortSignal: signal }),
          {}
        )
        if (!(response instanceof Readable)) {
          return yield* new DockerEngineError({ operation, detail: "the engine sent no progress stream" })
        }
        yield* followProgress({
          operation,
          subject: tag,
          response,
          entry: StatusEntry,
          onEntry: statusLine(onProgress),
          fail: (detail) => new DockerEngineError({ operation, detail })
        })
      })
      yield* Effect.raceFirst(imported, sourceFailure(source, operation)).pipe(
        Effect.ensuring(Effect.sync(() => source.destroy()))
      )
    })
  }
}
