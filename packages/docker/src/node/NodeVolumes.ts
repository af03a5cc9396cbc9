import type { Readable } from "node:stream"
import type Dockerode from "dockerode"
import { Effect } from "effect"
import type { DockerShape } from "../Docker.ts"
import { ContainerNotFound, DockerEngineError, EnumerationError } from "../DockerError.ts"
import { NetworkListAnswer, VolumeListAnswer } from "./EngineAnswers.ts"
import { call, decode, labelFilters, removal } from "./EngineCall.ts"
import { sourceFailure } from "./NodeImages.ts"

type Volumes = Pick<
  DockerShape,
  | "putArchive"
  | "getArchive"
  | "createVolume"
  | "removeVolume"
  | "listVolumesByLabel"
  | "listNetworksByLabel"
  | "removeNetwork"
>

/**
 * Named volumes and the archive upload that fills them; networks (a
 * Compose sandbox's, found and removed by label like its volumes). `patient` has no
 * request timeout: an upload of a large folder is one long request whose
 * caller bounds it.
 */
export const volumeOperations = (api: Dockerode, patient: Dockerode): Volumes => ({
  putArchive: Effect.fn("Docker.putArchive")(function* (id, path, archive) {
    const operation = "container.archive"
    const upload = call(
      operation,
      (signal) => patient.getContainer(id).putArchive(archive as NodeJS.ReadableStream, { path, abortSignal: signal }),
      { 404: ContainerNotFound }
    )
    // An unreadable file fails the upload with its own reason rather than a cut connection.
    const unreadable = (detail: string) =>
      new DockerEngineError({ operation, detail: `reading the archive: ${detail}` })
    yield* Effect.raceFirst(upload, sourceFailure(archive as Readable, unreadable)).pipe(
      Effect.ensuring(Effect.sync(() => archive.destroy()))
    )
  }),

  getArchive: Effect.fn("Docker.getArchive")(function* (id, path) {
    const archive = yield* Effect.acquireRelease(
      call(
        "container.archive",
        (signal) =>
          patient
            .getContainer(id)
            .getArchive({ path, abortSignal: signal })
            .then((answer: NodeJS.ReadableStream) => answer as Readable),
        {}
      ).pipe(
        // The container is the caller's: Docker's 404 then says the path is missing.
        Effect.catchIf(
          (error) => error._tag === "DockerEngineError" && error.statusCode === 404,
          () => Effect.succeed(undefined)
        )
      ),
      (answer) => Effect.sync(() => answer?.destroy())
    )
    return archive
  }),

  createVolume: Effect.fn("Docker.createVolume")(function* (name, labels) {
    yield* call("volume.create", () => api.createVolume({ Name: name, Labels: { ...labels } }), {})
  }),

  removeVolume: Effect.fn("Docker.removeVolume")(function* (name) {
    return yield* removal(call("volume.remove", () => api.getVolume(name).remove(), {}))
  }),

  listVolumesByLabel: Effect.fn("Docker.listVolumesByLabel")(function* (labels) {
    const answer = yield* call("volume.list", () => api.listVolumes({ filters: labelFilters(labels) }), {}).pipe(
      Effect.flatMap(decode("volume.list", VolumeListAnswer)),
      // Whatever went wrong, the caller must not mistake it for "no volumes".
      Effect.mapError((error) => new EnumerationError({ operation: "volume.list", detail: error.detail }))
    )
    return (answer.Volumes ?? []).map((volume) => ({ name: volume.Name, labels: volume.Labels ?? {} }))
  }),

  listNetworksByLabel: Effect.fn("Docker.listNetworksByLabel")(function* (labels) {
    const answer = yield* call("network.list", () => api.listNetworks({ filters: labelFilters(labels) }), {}).pipe(
      Effect.flatMap(decode("network.list", NetworkListAnswer)),
      Effect.mapError((error) => new EnumerationError({ operation: "network.list", detail: error.detail }))
    )
    return answer.map((network) => ({ name: network.Name, labels: network.Labels ?? {} }))
  }),

  removeNetwork: Effect.fn("Docker.removeNetwork")(function* (name) {
    return yield* removal(call("network.remove", () => api.getNetwork(name).remove(), {}))
  })
})
