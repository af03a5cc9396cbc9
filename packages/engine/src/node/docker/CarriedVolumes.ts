import { randomBytes } from "node:crypto"
import { posix } from "node:path"
import { type DockerShape, FolderArchive, type VolumeMount } from "@prbox/docker"
import {
  carriedVolumeName,
  codeServerVolumeName,
  copyProgressDue,
  copyProgressLine,
  mountsRefusal
} from "@prbox/domain"
import { Effect, Semaphore } from "effect"
import type { ContainerSpec, SharedFolder } from "../../ContainerSpec.ts"
import { LABELS } from "../../ContainerSpec.ts"
import { RuntimeError } from "../../Errors.ts"
import { withProgress } from "./ProgressQueue.ts"

type Progress = (line: string) => Effect.Effect<void>

/** Written last into a filled volume: one without it was cut short and is filled again. */
const MARKER = ".prbox-carried"
/** Where the throwaway container that fills the shared volume mounts it. */
const FILL_MOUNT = "/prbox-fill"

const failed = (operation: string) => (error: { readonly message: string }) =>
  new RuntimeError({ operation, detail: error.message })

/** A sandbox's labels less its own: what the shared volume and its filler carry (home, install, a test's run). */
const sharedLabels = (labels: Readonly<Record<string, string>>) =>
  Object.fromEntries(
    Object.entries(labels).filter(([key]) => key !== LABELS.sandbox && key !== LABELS.pr && key !== LABELS.repo)
  )

/**
 * A sandbox's folders on an engine that cannot see this machine's: each
 * carried folder in its own volume (`prbox-<id>-<kind>`, labelled like the
 * sandbox), filled once through the archive API before the container first
 * starts and kept for its later containers; the shared folder in one
 * read-only volume per key, filled once per engine.
 */
export const carriedVolumesFor = (docker: DockerShape, helper: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const sharedLocks = new Map<string, Semaphore.Semaphore>()
    const sharedReady = new Set<string>()

    /** Sends `hostPath` to `containerPath` in the (created) container, reporting bytes and files as they go. */
    const copy = (containerId: string, hostPath: string, containerPath: string, what: string, onProgress: Progress) =>
      Effect.gen(function* () {
        const listing = yield* FolderArchive.scanFolder(hostPath).pipe(Effect.mapError(failed("files.copy")))
        const line = (sent: number) => copyProgressLine(what, sent, listing.bytes, listing.files)
        const sent = yield* withProgress(onProgress, (report) => {
          let bytes = 0
          let reported = 0
          report(line(0))
          const archive = FolderArchive.packEntries(hostPath, listing.entries, {
            prefix: posix.basename(containerPath),
            owners: true,
            onFile: (size) => {
              bytes += size
              if (!copyProgressDue(reported, bytes, listing.bytes)) return
              reported = bytes
              report(line(bytes))
            }
          })
          return docker.putArchive(containerId, posix.dirname(containerPath), archive)
        })
        if (sent._tag === "Failure") return yield* failed("files.copy")(sent.failure)
      })

    const marked = (containerId: string, folder: string) =>
      docker.hasPath(containerId, `${folder}/${MARKER}`).pipe(Effect.mapError(failed("files.check")))

    const mark = (containerId: string, folder: string) =>
      docker
        .putArchive(containerId, folder, FolderArchive.packFile(MARKER, "filled by prbox\n"))
        .pipe(Effect.mapError(failed("files.copy")))

    const lockOf = (key: string) => {
      const found = sharedLocks.get(key)
      if (found !== undefined) return found
      const made = Semaphore.makeUnsafe(1)
      sharedLocks.set(key, made)
      return made
    }

    /**
     * The shared folder's volume, filled once per engine through a throwaway
     * container (created, never started, removed after); opens of the same
     * key wait for one another.
     */
    const ensureShared = (
      shared: SharedFolder,
      image: string,
      labels: Readonly<Record<string, string>>,
      onProgress: Progress
    ) =>
      lockOf(shared.key).withPermit(
        Effect.gen(function* () {
          const volume = codeServerVolumeName(shared.key)
          if (sharedReady.has(shared.key)) return volume
          yield* docker.createVolume(volume, labels).pipe(Effect.mapError(failed("volume.create")))
          const filler = yield* docker
            .createContainer({
              name: `prbox-fill-${randomBytes(6).toString("hex")}`,
              image,
              cmd: ["true"],
              env: {},
              labels: { ...labels, ...helper },
              binds: [],
              volumes: [{ volume, containerPath: FILL_MOUNT, readOnly: false }],
              exposedPort: 9
            })
            .pipe(Effect.mapError(failed("volume.fill")))
          yield* Effect.gen(function* () {
            if (yield* marked(filler.id, FILL_MOUNT)) return
            yield* copy(filler.id, shared.hostPath, FILL_MOUNT, `code-server (${shared.key})`, onProgress)
            yield* mark(filler.id, FILL_MOUNT)
          }).pipe(Effect.ensuring(Effect.ignore(docker.remove(filler.id, { force: true, volumes: false }))))
          sharedReady.add(shared.key)
          return volume
        })
      )

    /** Removes the volumes of the sandbox `labels` name (a container's labels); none is fine. */
    const removeSandboxVolumes = (labels: Readonly<Record<string, string>>) =>
      Effect.gen(function* () {
        const sandbox = labels[LABELS.sandbox]
        if (sandbox === undefined) return
        const install = labels[LABELS.install]
        const volumes = yield* docker
          .listVolumesByLabel({
            [LABELS.sandbox]: sandbox,
            ...(install === undefined ? {} : { [LABELS.install]: install })
          })
          .pipe(Effect.mapError(failed("volume.list")))
        yield* Effect.forEach(
          volumes,
          (volume) => docker.removeVolume(volume.name).pipe(Effect.mapError(failed("volume.remove"))),
          {
            discard: true
          }
        )
      })

    /**
     * Makes the sandbox's container on the engine with its volumes mounted
     * (`create` makes the container from the mounts), and fills them before
     * it ever starts. A fill cut short removes the container and the volumes
     * it left without a marker: nothing of the user's was in them yet.
     */
    const provision = (
      spec: ContainerSpec,
      onProgress: Progress,
      create: (volumes: ReadonlyArray<VolumeMount>) => Effect.Effect<string, RuntimeError>
    ) =>
      Effect.gen(function* () {
        if (spec.binds.length > 0) {
          return yield* new RuntimeError({
            operation: "container.create",
            detail: mountsRefusal(spec.binds.map((bind) => bind.hostPath))
          })
        }
        const carried = spec.carried ?? []
        const shared =
          spec.shared === undefined
            ? []
            : [
                {
                  volume: yield* ensureShared(spec.shared, spec.image, sharedLabels(spec.labels), onProgress),
                  containerPath: spec.shared.containerPath,
                  readOnly: true
                }
              ]
        const own = carried.map((folder) => ({
          volume: carriedVolumeName(spec.name, folder.kind),
          containerPath: folder.containerPath,
          readOnly: false
        }))
        yield* Effect.forEach(own, ({ volume }) => docker.createVolume(volume, spec.labels), { discard: true }).pipe(
          Effect.mapError(failed("volume.create"))
        )
        const containerId = yield* create([...own, ...shared])
        const removeContainer = docker.remove(containerId, { force: true, volumes: false })
        // The last folder's marker is written last: without it the fill was cut short.
        const last = carried.at(-1)
        if (last === undefined) return containerId
        if (
          yield* marked(containerId, last.containerPath).pipe(Effect.tapError(() => Effect.ignore(removeContainer)))
        ) {
          yield* onProgress("the sandbox's files are on the engine already: kept as they are")
          return containerId
        }
        yield* Effect.gen(function* () {
          for (const folder of carried) {
            yield* copy(containerId, folder.hostPath, folder.containerPath, `the ${folder.kind}`, onProgress)
          }
          yield* mark(containerId, last.containerPath)
        }).pipe(
          Effect.tapError(() =>
            Effect.ignore(
              removeContainer.pipe(Effect.andThen(Effect.forEach(own, ({ volume }) => docker.removeVolume(volume))))
            )
          )
        )
        return containerId
      })

    return { provision, removeSandboxVolumes }
  })
