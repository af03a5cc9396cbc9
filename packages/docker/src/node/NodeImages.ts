import { createReadStream } from "node:fs"
import { Readable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect, Redacted, Schema } from "effect"
import type { DockerShape } from "../Docker.ts"
import { DockerEngineError, ImageBuildFailed, ImageNotFound, ImagePullFailed } from "../DockerError.ts"
import type { PullAuth } from "../DockerTypes.ts"
import { packContext, scanContext } from "./BuildContext.ts"
import { ImageAnswer, toImageInfo } from "./EngineAnswers.ts"
import { call, decode } from "./EngineCall.ts"
import { followProgress } from "./ProgressStream.ts"
import { followPull, StatusEntry, statusLine } from "./PullProgress.ts"

type Images = Pick<
  DockerShape,
  "imageExists" | "imageInfo" | "pullImage" | "importImage" | "buildImage" | "saveImage" | "loadImage"
>

/** The engine's form of a registry login, and its secrets (to redact from anything the engine answers). */
const authConfig = (auth: PullAuth) => {
  if ("identityToken" in auth) {
    const token = Redacted.value(auth.identityToken)
    return { config: { serveraddress: auth.serverAddress, identitytoken: token }, secrets: [token] }
  }
  const password = Redacted.value(auth.password)
  return {
    config: { serveraddress: auth.serverAddress, username: auth.username, password },
    secrets: [password, Buffer.from(`${auth.username}:${password}`).toString("base64")]
  }
}

/** An entry of the classic builder's or a load's output: text, an error, or a pull's status while resolving `FROM`. */
const StreamEntry = Schema.Struct({
  ...StatusEntry.fields,
  stream: Schema.optional(Schema.String)
})

/** Reports each non-empty line of an entry's `stream` text. */
const streamLines = (entry: typeof StreamEntry.Type, onLine: (line: string) => void): void => {
  for (const line of (entry.stream ?? "").split("\n")) {
    const text = line.trimEnd()
    if (text.length > 0) onLine(text)
  }
}

// Stored in the image's name: enough to tell inputs apart, short enough to read.
const TAG_HASH_LENGTH = 24

/** The classic builder announces each instruction as "Step 3/5 : RUN npm ci". */
const stepLine = /^Step \d+\/\d+ : /

/** A stream we send to the engine failing (a file unreadable or gone) fails the request it feeds. */
export const sourceFailure = <E>(source: Readable, fail: (detail: string) => E): Effect.Effect<never, E> =>
  Effect.callback<never, E>((resume) => {
    source.once("error", (cause) => resume(Effect.fail(fail(cause.message))))
  })

/**
 * The image operations of the Docker service. `patient` has no request
 * timeout: an import's layer commit and a build's steps can be silent for
 * long, and their callers bound them.
 */
export const imageOperations = (api: Dockerode, patient: Dockerode): Images => {
  const inspect = (ref: string) => call("image.inspect", () => api.getImage(ref).inspect(), { 404: ImageNotFound })

  const exists = (ref: string) =>
    inspect(ref).pipe(
      Effect.as(true),
      Effect.catchTag("ImageNotFound", () => Effect.succeed(false))
    )

  return {
    imageExists: Effect.fn("Docker.imageExists")(function* (ref) {
      return yield* exists(ref)
    }),

    imageInfo: Effect.fn("Docker.imageInfo")(function* (ref) {
      return yield* inspect(ref).pipe(
        Effect.flatMap(decode("image.inspect", ImageAnswer)),
        Effect.map(toImageInfo),
        Effect.catchTag("ImageNotFound", () => Effect.succeed(undefined))
      )
    }),

    pullImage: Effect.fn("Docker.pullImage")(function* (ref, onProgress, auth) {
      const login = auth === undefined ? undefined : authConfig(auth)
      // dockerode sends `authconfig` as the X-Registry-Auth header, never in the URL.
      const options = login === undefined ? {} : { authconfig: login.config }
      const response = yield* call("image.pull", () => api.pull(ref, options), {}, login?.secrets).pipe(
        // Every refusal of a pull (unknown repository, no registry, denied) is the pull failing.
        Effect.catchTag("DockerEngineError", (error) =>
          Effect.fail(new ImagePullFailed({ operation: error.operation, detail: error.detail }))
        )
      )
      if (!(response instanceof Readable)) {
        return yield* new ImagePullFailed({ operation: "image.pull", detail: "the engine sent no progress stream" })
      }
      yield* followPull(ref, response, onProgress, login?.secrets)
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
      const unreadable = (detail: string) => new DockerEngineError({ operation, detail })
      yield* Effect.raceFirst(imported, sourceFailure(source, unreadable)).pipe(
        Effect.ensuring(Effect.sync(() => source.destroy()))
      )
    }),

    saveImage: Effect.fn("Docker.saveImage")(function* (ref) {
      return yield* Effect.acquireRelease(
        call("image.save", () => patient.getImage(ref).get(), { 404: ImageNotFound }).pipe(
          Effect.flatMap((archive) =>
            archive instanceof Readable
              ? Effect.succeed(archive)
              : Effect.fail(new DockerEngineError({ operation: "image.save", detail: "the engine sent no archive" }))
          )
        ),
        (archive) => Effect.sync(() => archive.destroy())
      )
    }),

    loadImage: Effect.fn("Docker.loadImage")(function* (archive, onProgress) {
      const operation = "image.load"
      const fail = (detail: string) => new DockerEngineError({ operation, detail })
      const loaded = Effect.gen(function* () {
        const response = yield* call(operation, (signal) => patient.loadImage(archive, { abortSignal: signal }), {})
        if (!(response instanceof Readable)) return yield* fail("the engine sent no progress stream")
        yield* followProgress({
          operation,
          subject: "the archive",
          response,
          entry: StreamEntry,
          onEntry: (entry) => {
            streamLines(entry, onProgress)
            return statusLine(onProgress)(entry)
          },
          fail
        })
      })
      yield* Effect.raceFirst(loaded, sourceFailure(archive, fail))
    }),

    buildImage: Effect.fn("Docker.buildImage")(function* (request, onProgress) {
      const operation = "image.build"
      const context = yield* scanContext(request)
      const tag = `${request.repository}:${context.hash.slice(0, TAG_HASH_LENGTH)}`
      if (yield* exists(tag)) return { tag, reused: true }

      const source = packContext(context.root, context.entries)
      let step: string | undefined
      const failed = (detail: string) =>
        new ImageBuildFailed({ operation, detail, ...(step === undefined ? {} : { step }) })
      const built = Effect.gen(function* () {
        const response = yield* call(
          operation,
          (signal) =>
            patient.buildImage(source, {
              t: tag,
              dockerfile: context.dockerfile,
              buildargs: { ...request.args },
              ...(request.target === undefined ? {} : { target: request.target }),
              labels: { ...request.labels },
              rm: true,
              forcerm: true,
              abortSignal: signal
            }),
          {}
        ).pipe(
          // The engine refusing the Dockerfile or its options is the build failing.
          Effect.catchTag(
            "DockerEngineError",
            (error): Effect.Effect<never, DockerEngineError | ImageBuildFailed> =>
              Effect.fail(error.statusCode === undefined ? error : failed(error.detail))
          )
        )
        if (!(response instanceof Readable)) return yield* failed("the engine sent no build output")
        yield* followProgress({
          operation,
          subject: tag,
          response,
          entry: StreamEntry,
          onEntry: (entry) => {
            streamLines(entry, (text) => {
              if (stepLine.test(text)) step = text
              onProgress(text)
            })
            return statusLine(onProgress)(entry)
          },
          fail: failed
        })
      })
      yield* Effect.raceFirst(built, sourceFailure(source, failed)).pipe(
        Effect.ensuring(Effect.sync(() => source.destroy()))
      )
      // The classic builder tags last: a build that says it succeeded but left no tag did not.
      if (!(yield* exists(tag))) return yield* failed("the build ended without its tag")
      return { tag, reused: false }
    })
  }
}
