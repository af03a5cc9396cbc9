import type Dockerode from "dockerode"
import { Effect, Schema } from "effect"
import type { DockerShape } from "../Docker.ts"
import { ContainerNotFound, EnumerationError, ImageInUse } from "../DockerError.ts"
import { call, decode, labelFilters, removal } from "./EngineCall.ts"

type Commits = Pick<DockerShape, "commitContainer" | "removeImage" | "listImagesByLabel">

const CommitAnswer = Schema.Struct({ Id: Schema.String })

const ImageListAnswer = Schema.Array(
  Schema.Struct({
    Id: Schema.String,
    RepoTags: Schema.NullOr(Schema.Array(Schema.String)),
    Labels: Schema.NullOr(Schema.Record(Schema.String, Schema.String))
  })
)

/**
 * Images made from containers (`docker commit`), and their removal and
 * listing by label. `patient` has no request timeout: a commit writes the
 * container's whole changed filesystem in one request its caller bounds.
 */
export const commitOperations = (api: Dockerode, patient: Dockerode): Commits => ({
  commitContainer: Effect.fn("Docker.commitContainer")(function* (id, request) {
    const answer = yield* call(
      "container.commit",
      (signal) =>
        patient.getContainer(id).commit({
          abortSignal: signal,
          _query: { container: id, repo: request.repo, tag: request.tag, pause: true },
          // The engine fills what the body leaves out from the container's config; an empty
          // Entrypoint given is kept empty (the image's own), never the container's.
          _body: { Entrypoint: [...request.entrypoint], Cmd: [...request.cmd], Labels: { ...request.labels } }
        }),
      { 404: ContainerNotFound }
    ).pipe(Effect.flatMap(decode("container.commit", CommitAnswer)))
    return answer.Id
  }),

  removeImage: Effect.fn("Docker.removeImage")(function* (ref) {
    return yield* removal(call("image.remove", () => api.getImage(ref).remove({ force: false }), { 409: ImageInUse }))
  }),

  listImagesByLabel: Effect.fn("Docker.listImagesByLabel")(function* (labels) {
    const answer = yield* call("image.list", () => api.listImages({ filters: labelFilters(labels) }), {}).pipe(
      Effect.flatMap(decode("image.list", ImageListAnswer)),
      // Whatever went wrong, the caller must not mistake it for "no images".
      Effect.mapError((error) => new EnumerationError({ operation: "image.list", detail: error.detail }))
    )
    return answer.map((image) => ({
      id: image.Id,
      tags: (image.RepoTags ?? []).filter((tag) => tag !== "<none>:<none>"),
      labels: image.Labels ?? {}
    }))
  })
})
