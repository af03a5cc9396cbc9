import { copyImage, type DockerShape } from "@prbox/docker"
import { Context, Effect, Semaphore } from "effect"
import { RuntimeError } from "../../Errors.ts"

/**
 * The engine images are copied from when the sandboxes' engine lacks them:
 * this machine's own (EngineClient.ts `imageSourceFor`). Undefined when the
 * sandboxes' engine IS this machine's: nothing is ever copied then.
 */
export const ImageSource = Context.Reference<DockerShape | undefined>("prbox/engine/ImageSource", {
  defaultValue: () => undefined
})

/** What `bring` did: the engine already had the local image, got it copied, or it is not this machine's to copy. */
export type Brought = "present" | "copied" | "not-local"

/** A progress line each time another tenth of the image has gone. */
const PROGRESS_STEPS = 10

const megabytes = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`

/**
 * A digest reference names what a registry stores: a loaded image carries no
 * repository digest, so it would not answer to it. Those are pulled.
 */
const copyable = (image: string): boolean => !image.includes("@")

/**
 * `docker save` of a repository without a tag sends every tag it has:
 * the one meant is `latest`. An id (`sha256:…`) or a tagged name stays.
 */
const savedRef = (image: string): string => {
  const name = image.split("/").at(-1) ?? image
  return name.includes(":") ? image : `${image}:latest`
}

/**
 * Brings images of this machine's engine (`source`) to the sandboxes' engine
 * (`target`) by save/load, cached by image id: the target holding the same
 * id as the source has it already. One copy at a time per image, so opens
 * that need the same image copy it once.
 */
export const imageTransferFor = (target: DockerShape, source: DockerShape | undefined) => {
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (image: string) => {
    const found = locks.get(image)
    if (found !== undefined) return found
    const made = Semaphore.makeUnsafe(1)
    locks.set(image, made)
    return made
  }

  const copy = Effect.fn("ImageTransfer.copy")(function* (
    from: DockerShape,
    image: string,
    local: { readonly id: string; readonly size: number },
    report: (line: string) => void
  ) {
    report(`copying ${image} (${megabytes(local.size)}) from this machine's engine`)
    let shown = 0
    yield* copyImage({
      ref: savedRef(image),
      from,
      to: target,
      onBytes: (sent) => {
        // The archive is about the layers' size; a line per tenth of it, never one per chunk.
        const step = local.size > 0 ? Math.floor((sent / local.size) * PROGRESS_STEPS) : 0
        if (step <= shown) return
        shown = step
        report(`sent ${megabytes(sent)} of ${megabytes(local.size)}`)
      },
      onProgress: report
    }).pipe(Effect.mapError((error) => new RuntimeError({ operation: "image.copy", detail: error.message })))
    const after = yield* target
      .imageInfo(image)
      .pipe(Effect.mapError((error) => new RuntimeError({ operation: "image.copy", detail: error.message })))
    if (after === undefined) {
      return yield* new RuntimeError({
        operation: "image.copy",
        detail: `${image} is not on the engine after its load`
      })
    }
    if (after.id !== local.id) {
      // An engine storing images otherwise (containerd's store) names the same image by another id.
      report(`the engine holds ${image} as ${after.id}, not ${local.id}: it is copied again at the next open`)
    }
  })

  return {
    /**
     * Brings `image` from this machine's engine when it has it and the target
     * lacks it or holds another image under that name. "not-local": this
     * machine has no copy (or cannot say): the caller pulls it instead.
     */
    bring: Effect.fn("ImageTransfer.bring")(function* (image: string, report: (line: string) => void) {
      if (source === undefined || !copyable(image)) return "not-local" as Brought
      const local = yield* Effect.result(source.imageInfo(image))
      if (local._tag === "Failure") {
        report(`this machine's engine cannot be asked for ${image} (${local.failure.message})`)
        return "not-local" as Brought
      }
      const found = local.success
      if (found === undefined) return "not-local" as Brought
      // Asked again under the image's lock: an open that waited for another's copy finds it there.
      return yield* lockOf(image).withPermit(
        Effect.gen(function* () {
          const remote = yield* target
            .imageInfo(image)
            .pipe(Effect.mapError((error) => new RuntimeError({ operation: "image.inspect", detail: error.message })))
          if (remote?.id === found.id) return "present" as Brought
          yield* copy(source, image, found, report)
          return "copied" as Brought
        })
      )
    })
  }
}
